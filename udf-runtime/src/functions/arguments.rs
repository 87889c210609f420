//! Named-argument binding (Flink's rules): positional arguments first, then `name => value`
//! in any order; an omitted optional argument is NULL; unknown, repeated and missing names
//! are errors; functions with overloads or varargs take positional arguments only. Every
//! call is matched here: SQL and DataFrame calls of every function kind, PTF calls with their
//! system arguments, and the SQL form of table aggregates.

use udf_core::{ArgSpec, FunctionSpec};

/// A name as written in the call.
#[derive(Clone, Debug)]
pub struct ArgName {
    pub value: String,
    /// Quoted names match exactly; unquoted ones ignore case.
    pub quoted: bool,
}

impl ArgName {
    /// A name as written in SQL.
    pub fn of(ident: &datafusion::sql::sqlparser::ast::Ident) -> ArgName {
        ArgName {
            value: ident.value.clone(),
            quoted: ident.quote_style.is_some(),
        }
    }

    fn matches(&self, name: &str) -> bool {
        if self.quoted {
            self.value == name
        } else {
            self.value.eq_ignore_ascii_case(name)
        }
    }
}

/// A call's arguments by parameter: `params[i]` is what was given for parameter `i`, and
/// `extra` what was given by name for the names a call accepts besides its parameters
/// (`uid` and `on_time` of a process table function), as `(index into those names, value)`.
pub struct Bound<T> {
    pub params: Vec<Option<T>>,
    pub extra: Vec<(usize, T)>,
}

/// Matches `args` — `(name, value)` in call order, `None` for positional arguments — to the
/// parameters `params` and the names `extra`: positional arguments first and at most one per
/// parameter, then names in any order, each at most once. Names ignore case unless quoted.
pub fn match_names<'p, T>(
    function: &str,
    params: impl IntoIterator<Item = &'p ArgSpec>,
    extra: &[&str],
    args: Vec<(Option<ArgName>, T)>,
) -> Result<Bound<T>, String> {
    let params: Vec<&ArgSpec> = params.into_iter().collect();
    let listing = || {
        let names: Vec<&str> = params
            .iter()
            .map(|p| p.name.as_str())
            .chain(extra.iter().copied())
            .collect();
        if names.is_empty() {
            "none".to_owned()
        } else {
            names.join(", ")
        }
    };
    let mut bound = Bound {
        params: params.iter().map(|_| None).collect(),
        extra: Vec::new(),
    };
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
                if let Some(index) = extra.iter().position(|e| name.matches(e)) {
                    if bound.extra.iter().any(|(seen, _)| *seen == index) {
                        return Err(repeated(function, extra[index]));
                    }
                    bound.extra.push((index, value));
                    continue;
                }
                params.iter().position(|p| name.matches(&p.name)).ok_or_else(|| {
                    format!(
                        "function `{function}` has no argument named `{}`; its arguments are: {}",
                        name.value,
                        listing()
                    )
                })?
            }
        };
        if bound.params[index].is_some() {
            return Err(repeated(function, &params[index].name));
        }
        bound.params[index] = Some(value);
    }
    Ok(bound)
}

fn repeated(function: &str, name: &str) -> String {
    format!("argument `{name}` of `{function}` is given more than once")
}

/// Orders the arguments of a call by parameter, filling omitted optional ones with `null(param)`.
/// `args` holds `(name, value)` in call order, `None` for positional arguments; a call with
/// positional arguments only is left as it is (overload resolution checks it).
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
    let bound = match_names(function, params, &[], args)?;
    bound
        .params
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
