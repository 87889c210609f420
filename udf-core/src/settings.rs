//! The settings of a function instance: its fields serialized, when its type implements
//! `serde::Serialize` (deriving it declares the fields settings). Two processes compare them
//! to tell whether they hold the same instance under one name (a cluster's client and its
//! executors). The function macros ask [`Probe`]; a type without `Serialize` has none.

use serde::Serialize;

/// Wraps an instance for the settings question; the answer depends on its type.
pub struct Probe<'a, T>(pub &'a T);

/// Chosen first (the receiver needs no extra reference) when the type is `Serialize`.
pub trait SerializedSettings {
    fn settings(&self) -> Option<Vec<u8>>;
}

impl<T: Serialize> SerializedSettings for Probe<'_, T> {
    fn settings(&self) -> Option<Vec<u8>> {
        postcard::to_stdvec(self.0).ok()
    }
}

/// Chosen otherwise: no settings.
pub trait NoSettings {
    fn settings(&self) -> Option<Vec<u8>>;
}

impl<T> NoSettings for &Probe<'_, T> {
    fn settings(&self) -> Option<Vec<u8>> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Configured {
        factor: i32,
    }

    struct Opaque;

    // The form the generated code uses: the borrow picks `NoSettings` for a type without
    // `Serialize`, and is needless only for one with it.
    #[allow(clippy::needless_borrow)]
    #[test]
    fn a_serializable_instance_has_its_fields_as_settings_and_others_none() {
        let probe = Probe(&Configured { factor: 3 });
        let settings = (&probe).settings();
        assert_eq!(settings, Some(postcard::to_stdvec(&3i32).unwrap()));
        let other = (&Probe(&Configured { factor: 4 })).settings();
        assert_ne!(settings, other, "other fields, other settings");
        assert_eq!((&Probe(&Opaque)).settings(), None);
    }
}
