//! `#[derive(SqlRow)]`: a struct with named fields is a SQL `ROW` with the same fields.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields};

use crate::attr;
use crate::ctxt::Ctxt;
use crate::dispatch;
use crate::hint::Hint;
use crate::types;

struct Field {
    ident: syn::Ident,
    ty: syn::Type,
    hint: Option<Hint>,
}

pub fn expand(input: TokenStream) -> TokenStream {
    let cx = Ctxt::new();
    let mut input = match syn::parse2::<DeriveInput>(input) {
        Ok(input) => input,
        Err(error) => return error.to_compile_error(),
    };
    if !input.generics.params.is_empty() {
        cx.error_spanned_by(
            &input.generics,
            "a SqlRow struct cannot be generic: a ROW type has fixed field types",
        );
    }
    for misplaced in input
        .attrs
        .iter()
        .filter(|a| a.path().is_ident(attr::DATA_TYPE))
    {
        cx.error_spanned_by(
            misplaced,
            "a SqlRow struct is the ROW of its fields: put #[data_type(\"...\")] on a field",
        );
    }
    let fields = match &mut input.data {
        Data::Struct(data) => match &mut data.fields {
            Fields::Named(named) => named
                .named
                .iter_mut()
                .map(|field| Field {
                    ident: field.ident.clone().expect("named field"),
                    ty: field.ty.clone(),
                    hint: attr::take_one(&mut field.attrs, attr::DATA_TYPE, &cx)
                        .and_then(|a| attr::parse_data_type(&a, &cx)),
                })
                .collect(),
            _ => {
                cx.error_spanned_by(&input.ident, "#[derive(SqlRow)] needs a struct with named fields (they become the ROW's field names)");
                Vec::new()
            }
        },
        Data::Enum(data) => {
            cx.error_spanned_by(
                data.enum_token,
                "#[derive(SqlRow)] needs a struct; SQL has no sum types",
            );
            Vec::new()
        }
        Data::Union(data) => {
            cx.error_spanned_by(data.union_token, "#[derive(SqlRow)] needs a struct");
            Vec::new()
        }
    };
    if let Err(error) = cx.check() {
        return error.to_compile_error();
    }
    generate(&input.vis, &input.ident, &fields)
}

fn generate(vis: &syn::Visibility, ident: &syn::Ident, fields: &[Field]) -> TokenStream {
    let reader = format_ident!("{ident}Reader");
    let builder = format_ident!("{ident}Builder");
    let rust_name = ident.to_string();
    let count = fields.len();
    let idents: Vec<_> = fields.iter().map(|f| &f.ident).collect();
    let names: Vec<_> = fields
        .iter()
        .map(|f| f.ident.to_string().trim_start_matches("r#").to_owned())
        .collect();
    let tys: Vec<_> = fields.iter().map(|f| &f.ty).collect();
    let indices: Vec<_> = (0..count).collect();
    let hints = fields.iter().map(|f| match &f.hint {
        Some(hint) => {
            let tokens = hint.tokens();
            quote!(::core::option::Option::Some(#tokens))
        }
        None => quote!(::core::option::Option::None),
    });
    let field_types = fields
        .iter()
        .zip(hints)
        .zip(&names)
        .map(|((f, hint), name)| {
            let ty = &f.ty;
            let data_type = quote_spanned!(ty.span()=> <#ty as __udf::RowFieldValue>::data_type);
            quote!(__udf::RowField::new(#name, #data_type(#hint)))
        });
    let readers = fields.iter().map(|f| {
        let ty = &f.ty;
        quote_spanned!(ty.span()=> __udf::FieldReader<'a, #ty>)
    });
    let builders = fields.iter().map(|f| {
        let ty = &f.ty;
        quote_spanned!(ty.span()=> <#ty as __udf::RowFieldValue>::Builder)
    });
    let make_builders = fields.iter().map(|f| {
        let ty = &f.ty;
        quote_spanned!(ty.span()=> __udf::field_builder::<#ty>)
    });
    let checks = fields.iter().map(field_checks);
    // Every item is bounded on its field types, so what the items do with a field type is
    // not checked against it: an unsupported type gets the one error of its check in
    // `field_checks`, not one per use. (Written as for-all bounds, which rustc takes as
    // assumptions instead of checking them where they are written.)
    let bounds = fields.iter().map(|f| match f.hint {
        Some(_) => dispatch::for_all(&f.ty, quote!(__udf::HintedRowField)),
        None => dispatch::for_all(&f.ty, quote!(__udf::SqlRowField)),
    });
    let bounds = quote!(where #(#bounds),*);

    quote! {
        const _: () = {
            use ::udf_core::__private as __udf;

            #(#checks)*

            impl __udf::SqlType for #ident #bounds {
                const ROOTS: __udf::RootSet = __udf::RootSet::of(__udf::TypeRoot::Row);

                fn data_type() -> __udf::DataType {
                    __udf::DataType::row([#(#field_types),*]).not_null()
                }
            }

            impl __udf::SqlRow for #ident #bounds {
                const FIELD_NAMES: &'static [&'static str] = &[#(#names),*];
            }

            // A field of other SqlRow structs, with or without a hint.
            impl __udf::HintedRowField for #ident #bounds {}
            impl __udf::SqlRowField for #ident #bounds {}

            #[doc(hidden)]
            #vis struct #reader<'a> #bounds {
                #(#idents: #readers,)*
            }

            impl<'a> __udf::ArgValue<'a> for #ident #bounds {
                type Reader = #reader<'a>;

                fn reader(array: &'a dyn __udf::Array) -> __udf::Result<Self::Reader, __udf::Error> {
                    let columns = __udf::struct_columns(array, #count, #rust_name)?;
                    ::core::result::Result::Ok(#reader {
                        #(#idents: __udf::FieldReader::new(columns, #indices, #names)?,)*
                    })
                }
            }

            impl<'a> __udf::ArgReader<'a> for #reader<'a> #bounds {
                type Value = #ident;

                // A field read each: inlined into the row loop that reads them.
                #[inline(always)]
                fn get(&self, index: usize) -> __udf::Result<#ident, __udf::Error> {
                    ::core::result::Result::Ok(#ident {
                        #(#idents: self.#idents.get(index)?,)*
                    })
                }
            }

            #[doc(hidden)]
            #vis struct #builder #bounds {
                parts: __udf::StructParts,
                #(#idents: #builders,)*
            }

            impl __udf::ResultValue for #ident #bounds {
                type Builder = #builder;

                fn builder(data_type: &__udf::DataType, capacity: usize) -> __udf::Result<Self::Builder, __udf::Error> {
                    let types = __udf::row_field_types(data_type, #count, #rust_name)?;
                    ::core::result::Result::Ok(#builder {
                        parts: __udf::StructParts::new(data_type, capacity),
                        #(#idents: #make_builders(&types[#indices], capacity, #names)?,)*
                    })
                }
            }

            impl __udf::ValueBuilder<#ident> for #builder #bounds {
                #[inline(always)]
                fn append(&mut self, value: #ident) -> __udf::Result<(), __udf::Error> {
                    #(__udf::ValueBuilder::append(&mut self.#idents, value.#idents)?;)*
                    self.parts.append_valid();
                    ::core::result::Result::Ok(())
                }

                #[inline]
                fn append_null(&mut self) {
                    #(__udf::ValueBuilder::<#tys>::append_null(&mut self.#idents);)*
                    self.parts.append_null();
                }

                fn finish(&mut self) -> __udf::Result<__udf::ArrayRef, __udf::Error> {
                    let columns = ::std::vec![#(__udf::ValueBuilder::<#tys>::finish(&mut self.#idents)?),*];
                    self.parts.finish(columns)
                }
            }
        };
    }
}

fn field_checks(field: &Field) -> TokenStream {
    let ty = types::with_lifetimes(&field.ty, "'static");
    let shown = types::display(&field.ty);
    // Without a hint, the type must be a `SqlRowField`: supported, with a SQL type of its own.
    let Some(hint) = &field.hint else {
        return quote_spanned!(field.ty.span()=> const _: () = __udf::row_field::<#ty>(););
    };
    let root = crate::hint::root_tokens(&hint.data_type);
    let message = format!(
        "the type hint `{}` does not fit the Rust type `{shown}`",
        hint.literal.value()
    );
    let mut checks = dispatch::assert_const(
        hint.literal.span(),
        quote_spanned!(field.ty.span()=> __udf::field_roots::<#ty>().contains(#root)),
        &message,
    );
    if !hint.data_type.nullable {
        let message =
            format!("`{shown}` may be NULL, but the type hint says NOT NULL: drop one of them");
        checks.extend(dispatch::assert_const(
            hint.literal.span(),
            quote!(!__udf::field_nullable::<#ty>()),
            &message,
        ));
    }
    checks
}
