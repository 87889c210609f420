//! `#[data_type("...")]` hints: parsed at compile time, emitted as constructor code.

use proc_macro2::TokenStream;
use quote::quote;
use udf_types::{DataType, DayTimeResolution, RowField, TypeKind, YearMonthResolution};

/// A parsed hint together with the literal it came from (for error spans).
#[derive(Clone)]
pub struct Hint {
    pub data_type: DataType,
    pub literal: syn::LitStr,
}

impl Hint {
    /// Parses the literal with Flink's type syntax; a malformed type is an error at the
    /// literal whose message shows where in the string the problem is.
    pub fn parse(literal: syn::LitStr) -> syn::Result<Hint> {
        let text = literal.value();
        match udf_types::parse(&text) {
            Ok(data_type) => Ok(Hint { data_type, literal }),
            Err(error) => Err(syn::Error::new(
                literal.span(),
                format!(
                    "invalid data type: {}\n{}",
                    error.message,
                    indent(&error.pointer(&text))
                ),
            )),
        }
    }

    /// Code that builds the hinted type at run time (no parsing at run time).
    pub fn tokens(&self) -> TokenStream {
        data_type_tokens(&self.data_type)
    }
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|line| format!("    {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn data_type_tokens(data_type: &DataType) -> TokenStream {
    let kind = kind_tokens(&data_type.kind);
    let nullable = data_type.nullable;
    quote!(__udf::DataType::new(#kind, #nullable))
}

fn string_option(value: &Option<String>) -> TokenStream {
    match value {
        Some(s) => quote!(::std::option::Option::Some(::std::string::String::from(#s))),
        None => quote!(::std::option::Option::None),
    }
}

fn kind_tokens(kind: &TypeKind) -> TokenStream {
    match kind {
        TypeKind::Boolean => quote!(__udf::TypeKind::Boolean),
        TypeKind::TinyInt => quote!(__udf::TypeKind::TinyInt),
        TypeKind::SmallInt => quote!(__udf::TypeKind::SmallInt),
        TypeKind::Int => quote!(__udf::TypeKind::Int),
        TypeKind::BigInt => quote!(__udf::TypeKind::BigInt),
        TypeKind::Float => quote!(__udf::TypeKind::Float),
        TypeKind::Double => quote!(__udf::TypeKind::Double),
        TypeKind::Decimal { precision, scale } => {
            quote!(__udf::TypeKind::Decimal { precision: #precision, scale: #scale })
        }
        TypeKind::Char { length } => quote!(__udf::TypeKind::Char { length: #length }),
        TypeKind::VarChar { length } => quote!(__udf::TypeKind::VarChar { length: #length }),
        TypeKind::Binary { length } => quote!(__udf::TypeKind::Binary { length: #length }),
        TypeKind::VarBinary { length } => quote!(__udf::TypeKind::VarBinary { length: #length }),
        TypeKind::Date => quote!(__udf::TypeKind::Date),
        TypeKind::Time { precision } => quote!(__udf::TypeKind::Time { precision: #precision }),
        TypeKind::Timestamp { precision } => {
            quote!(__udf::TypeKind::Timestamp { precision: #precision })
        }
        TypeKind::TimestampLtz { precision } => {
            quote!(__udf::TypeKind::TimestampLtz { precision: #precision })
        }
        TypeKind::IntervalYearMonth(i) => {
            let resolution = match i.resolution {
                YearMonthResolution::Year => quote!(Year),
                YearMonthResolution::YearToMonth => quote!(YearToMonth),
                YearMonthResolution::Month => quote!(Month),
            };
            let p = i.year_precision;
            quote!(__udf::TypeKind::IntervalYearMonth(__udf::YearMonthInterval {
                resolution: __udf::YearMonthResolution::#resolution,
                year_precision: #p,
            }))
        }
        TypeKind::IntervalDayTime(i) => {
            let resolution = match i.resolution {
                DayTimeResolution::Day => quote!(Day),
                DayTimeResolution::DayToHour => quote!(DayToHour),
                DayTimeResolution::DayToMinute => quote!(DayToMinute),
                DayTimeResolution::DayToSecond => quote!(DayToSecond),
                DayTimeResolution::Hour => quote!(Hour),
                DayTimeResolution::HourToMinute => quote!(HourToMinute),
                DayTimeResolution::HourToSecond => quote!(HourToSecond),
                DayTimeResolution::Minute => quote!(Minute),
                DayTimeResolution::MinuteToSecond => quote!(MinuteToSecond),
                DayTimeResolution::Second => quote!(Second),
            };
            let (d, f) = (i.day_precision, i.fractional_precision);
            quote!(__udf::TypeKind::IntervalDayTime(__udf::DayTimeInterval {
                resolution: __udf::DayTimeResolution::#resolution,
                day_precision: #d,
                fractional_precision: #f,
            }))
        }
        TypeKind::Array(element) => {
            let element = data_type_tokens(element);
            quote!(__udf::TypeKind::Array(::std::boxed::Box::new(#element)))
        }
        TypeKind::Multiset(element) => {
            let element = data_type_tokens(element);
            quote!(__udf::TypeKind::Multiset(::std::boxed::Box::new(#element)))
        }
        TypeKind::Map { key, value } => {
            let (key, value) = (data_type_tokens(key), data_type_tokens(value));
            quote!(__udf::TypeKind::Map {
                key: ::std::boxed::Box::new(#key),
                value: ::std::boxed::Box::new(#value),
            })
        }
        TypeKind::Row(fields) => {
            let fields = fields.iter().map(
                |RowField {
                     name,
                     data_type,
                     description,
                 }| {
                    let data_type = data_type_tokens(data_type);
                    let description = string_option(description);
                    quote!(__udf::RowField {
                        name: ::std::string::String::from(#name),
                        data_type: #data_type,
                        description: #description,
                    })
                },
            );
            quote!(__udf::TypeKind::Row(::std::vec![#(#fields),*]))
        }
        TypeKind::Raw { class, snapshot } => {
            let (class, snapshot) = (string_option(class), string_option(snapshot));
            quote!(__udf::TypeKind::Raw { class: #class, snapshot: #snapshot })
        }
        TypeKind::Null => quote!(__udf::TypeKind::Null),
    }
}

/// The name of a type root as generated code spells it (`__udf::TypeRoot::Int`).
pub fn root_tokens(data_type: &DataType) -> TokenStream {
    let name = syn::Ident::new(
        &format!("{:?}", data_type.root()),
        proc_macro2::Span::call_site(),
    );
    quote!(__udf::TypeRoot::#name)
}
