//! How DataFusion tells our function adapters apart: by SQL name and by the function object
//! (two differently configured instances under one name are different functions).

/// `Debug`, `PartialEq`, `Eq` and `Hash` for an adapter with fields `name: String` and
/// `function: Arc<..>`.
macro_rules! function_identity {
    ($adapter:ident) => {
        impl ::std::fmt::Debug for $adapter {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.debug_struct(stringify!($adapter))
                    .field("name", &self.name)
                    .finish_non_exhaustive()
            }
        }

        impl PartialEq for $adapter {
            fn eq(&self, other: &Self) -> bool {
                self.name == other.name && ::std::sync::Arc::ptr_eq(&self.function, &other.function)
            }
        }

        impl Eq for $adapter {}

        impl ::std::hash::Hash for $adapter {
            fn hash<H: ::std::hash::Hasher>(&self, state: &mut H) {
                self.name.hash(state);
            }
        }
    };
}

pub(crate) use function_identity;
