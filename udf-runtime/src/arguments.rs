//! Named-argument binding (Flink's rules): positional arguments first, then `name => value`
//! in any order; an omitted optional argument is NULL; unknown, repeated and missing names
//! are errors; functions with overloads or varargs take positional arguments only.

use udf_core::{ArgSpec, FunctionSpec};

/// A name as written in the call.
#[derive(Clone, Debug)]
pub struct ArgName {
    pub value: String,
    /// Quoted names match exactly; unquoted ones ignore case.
    pub quoted: bool,
}

impl ArgName {
    fn matches(&self, param: &ArgSpec) -> bool {
        if self.quoted {
            self.value == param.name
        } else {
            self.value.eq_ignore_ascii_case(&param.name)
        }
    }
}

/// Orders the arguments of a call by parameter, filling omitted optional ones with `null(param)`.
/// `args` holds `(name, value)` in call order, `None` for positional arguments.
pub fn bind<T>(
    function: &str,
    spec: &FunctionSpec,
    args: Vec<(Option<ArgName>, T)>,
    null: impl Fn(&ArgSpec) -> T,
) -> Result<Vec<T>, String> {
    if args.iter().all(|(name, _)| name.is_none()) {
        return Ok(args.into_iter().map(|(_, value)| value).collect());
    }
    if !spec.supports_named_arguments() {
        let reason = if spec.signatures.len() > 1 {
            "it has overloads"
        } else {
            "it takes varargs"
        };
        return Err(format!(
            "function `{function}` does not accept named arguments because {reason}; pass the arguments by position"
        ));
    }
    let params = &spec.signatures[0].args;
    let listing = || {
        params
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut slots: Vec<Option<T>> = params.iter().map(|_| None).collect();
    let mut named_seen = false;
    for (position, (name, value)) in args.into_iter().enumerate() {
        let index = match name {
            None if named_seen => {
                return Err(format!(
                    "in the call of `{function}`, the positional argument {} follows a named argument; positional arguments come first",
                    position + 1
                ));
            }
            None if position >= params.len() => {
                return Err(format!(
                    "function `{function}` takes at most {} arguments",
                    params.len()
                ));
            }
            None => position,
            Some(name) => {
                named_seen = true;
                params.iter().position(|p| name.matches(p)).ok_or_else(|| {
                    format!(
                        "function `{function}` has no argument named `{}`; its arguments are: {}",
                        name.value,
                        listing()
                    )
                })?
            }
        };
        if slots[index].is_some() {
            return Err(format!(
                "argument `{}` of `{function}` is given more than once",
                params[index].name
            ));
        }
        slots[index] = Some(value);
    }
    slots
        .into_iter()
        .zip(params)
        .map(|(slot, param)| match slot {
            Some(value) => Ok(value),
            None if param.optional => Ok(null(param)),
            None => Err(format!("missing argument `{}` of `{function}`", param.name)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use udf_core::types::DataType;
    use udf_core::{ArgType, FunctionKind, OutputType, Signature};

    fn greet() -> FunctionSpec {
        FunctionSpec::new("greet", FunctionKind::Scalar).signature(
            Signature::new("eval")
                .arg(ArgSpec::new("name", ArgType::Typed(DataType::string())))
                .arg(ArgSpec::new("greeting", ArgType::Typed(DataType::string())).optional(true))
                .output(OutputType::Fixed(DataType::string())),
        )
    }

    fn named(n: &str) -> Option<ArgName> {
        Some(ArgName {
            value: n.into(),
            quoted: false,
        })
    }

    fn call(args: Vec<(Option<ArgName>, &'static str)>) -> Result<Vec<&'static str>, String> {
        bind("greet", &greet(), args, |_| "NULL")
    }

    #[test]
    fn reorders_and_fills_optional() {
        assert_eq!(
            call(vec![(named("greeting"), "'Hi'"), (named("NAME"), "s")]).unwrap(),
            ["s", "'Hi'"]
        );
        assert_eq!(call(vec![(named("name"), "s")]).unwrap(), ["s", "NULL"]);
        assert_eq!(
            call(vec![(None, "s"), (named("greeting"), "'Yo'")]).unwrap(),
            ["s", "'Yo'"]
        );
    }

    #[test]
    fn rejects_bad_calls() {
        let quoted = Some(ArgName {
            value: "NAME".into(),
            quoted: true,
        });
        assert!(
            call(vec![(quoted, "s")])
                .unwrap_err()
                .contains("no argument named `NAME`")
        );
        assert!(
            call(vec![(named("x"), "s")])
                .unwrap_err()
                .contains("its arguments are: name, greeting")
        );
        assert!(
            call(vec![(named("name"), "a"), (named("name"), "b")])
                .unwrap_err()
                .contains("more than once")
        );
        assert!(
            call(vec![(named("greeting"), "a")])
                .unwrap_err()
                .contains("missing argument `name`")
        );
        assert!(
            call(vec![(named("name"), "a"), (None, "b")])
                .unwrap_err()
                .contains("follows a named argument")
        );
    }

    #[test]
    fn overloaded_functions_take_positions_only() {
        let spec = greet()
            .signature(Signature::new("eval_other").output(OutputType::Fixed(DataType::int())));
        let error = bind("f", &spec, vec![(named("name"), 1)], |_| 0).unwrap_err();
        assert!(
            error.contains("does not accept named arguments because it has overloads"),
            "{error}"
        );
    }
}
