//! Overload resolution: which signature a call with given argument types binds to, and
//! what each argument must be converted to. Exact matches win, then the cheapest implicit
//! widening (Flink's rules); a tie or no match is an error listing every candidate.

use udf_core::types::{DataType, TypeKind, TypeRoot};
use udf_core::{ArgType, FunctionSpec, Signature};

/// How an argument reaches a parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum Conversion {
    /// Read as it is (same type, or a physical variant the reader handles).
    Keep,
    /// Cast to this type first.
    Cast(DataType),
}

/// A call bound to one signature.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    pub signature: usize,
    /// One entry per argument of the call.
    pub conversions: Vec<Conversion>,
}

/// Binds argument types (`None` = the NULL literal's type) to a signature of `spec`.
pub fn resolve(
    name: &str,
    spec: &FunctionSpec,
    args: &[Option<DataType>],
) -> Result<Resolved, String> {
    let mut best: Option<(u32, Resolved)> = None;
    let mut tied = false;
    for (index, signature) in spec.signatures.iter().enumerate() {
        let Some((cost, conversions)) = bind(signature, args) else {
            continue;
        };
        let candidate = Resolved {
            signature: index,
            conversions,
        };
        match &best {
            Some((best_cost, _)) if cost > *best_cost => {}
            Some((best_cost, _)) if cost == *best_cost => tied = true,
            _ => {
                best = Some((cost, candidate));
                tied = false;
            }
        }
    }
    match best {
        Some((_, resolved)) if !tied => Ok(resolved),
        Some(_) => Err(call_error(name, spec, args, "Ambiguous function call")),
        None => Err(call_error(name, spec, args, "Invalid function call")),
    }
}

fn call_error(
    name: &str,
    spec: &FunctionSpec,
    args: &[Option<DataType>],
    headline: &str,
) -> String {
    let shown: Vec<String> = args
        .iter()
        .map(|a| {
            a.as_ref()
                .map_or_else(|| "NULL".to_owned(), |t| t.to_string())
        })
        .collect();
    format!(
        "{headline}:\n{name}({})\nExpected signatures are:\n{}",
        shown.join(", "),
        spec.signature_lines(name).join("\n")
    )
}

/// Cost of passing `args` to `signature`, or `None` if they do not fit. Costs are doubled
/// so that a varargs signature loses a tie against a fixed one by one point.
fn bind(signature: &Signature, args: &[Option<DataType>]) -> Option<(u32, Vec<Conversion>)> {
    let fixed = signature.args.len();
    let fits_arity = match &signature.varargs {
        Some(_) => args.len() >= fixed,
        None => args.len() >= signature.required_args() && args.len() <= fixed,
    };
    if !fits_arity {
        return None;
    }
    let mut cost = if signature.varargs.is_some() { 1 } else { 0 };
    let mut conversions = Vec::with_capacity(args.len());
    for (i, arg) in args.iter().enumerate() {
        let param = signature.args.get(i).or(signature.varargs.as_ref())?;
        let (c, conversion) = convert(arg.as_ref(), &param.ty)?;
        cost += 2 * c;
        conversions.push(conversion);
    }
    Some((cost, conversions))
}

/// How an argument of type `arg` reaches a parameter of type `param`, and at what cost.
fn convert(arg: Option<&DataType>, param: &ArgType) -> Option<(u32, Conversion)> {
    let target = match param {
        ArgType::Any { .. } => return Some((1, Conversion::Keep)),
        ArgType::AnyRow { .. } => {
            return match arg {
                None => None,
                Some(t) if t.root() == TypeRoot::Row => Some((1, Conversion::Keep)),
                Some(_) => None,
            };
        }
        ArgType::Typed(t) => t,
        // A table is never a value argument (process table functions bind tables apart).
        ArgType::Table(_) => return None,
    };
    let Some(arg) = arg else {
        // The NULL literal fits every parameter.
        return Some((1, Conversion::Cast(target.clone())));
    };
    if arg.root() == TypeRoot::Null {
        return Some((1, Conversion::Cast(target.clone())));
    }
    if arg.equals_ignoring_nullability(target) || reads_natively(arg, target) {
        return Some((0, Conversion::Keep));
    }
    if arg.root() == target.root() {
        // Same type family with other parameters (precision, length, nested types).
        return Some((1, Conversion::Cast(target.clone())));
    }
    implicit_cast_cost(arg, target).map(|cost| (cost, Conversion::Cast(target.clone())))
}

/// Readers accept every physical layout of character and binary data, so no cast is
/// needed between them.
fn reads_natively(arg: &DataType, param: &DataType) -> bool {
    let text = |t: &DataType| matches!(t.kind, TypeKind::Char { .. } | TypeKind::VarChar { .. });
    let bytes =
        |t: &DataType| matches!(t.kind, TypeKind::Binary { .. } | TypeKind::VarBinary { .. });
    (text(arg) && text(param)) || (bytes(arg) && bytes(param))
}

/// Flink's implicit (lossless) conversions between different type roots.
fn implicit_cast_cost(from: &DataType, to: &DataType) -> Option<u32> {
    use TypeRoot::*;
    const NUMERIC: [TypeRoot; 7] = [TinyInt, SmallInt, Int, BigInt, Decimal, Float, Double];
    let rank = |root| NUMERIC.iter().position(|r| *r == root);
    if let (Some(a), Some(b)) = (rank(from.root()), rank(to.root())) {
        return (b > a).then(|| 1 + (b - a) as u32);
    }
    match (from.root(), to.root()) {
        (Date, Timestamp | TimestampLtz)
        | (Timestamp, TimestampLtz)
        | (TimestampLtz, Timestamp) => Some(2),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use udf_core::{ArgSpec, OutputType};

    fn sig(args: &[DataType], varargs: Option<DataType>) -> Signature {
        let mut s = Signature::new("eval").output(OutputType::Fixed(DataType::int()));
        for (i, a) in args.iter().enumerate() {
            s = s.arg(ArgSpec::new(
                format!("a{i}"),
                ArgType::Typed(a.clone().not_null()),
            ));
        }
        if let Some(v) = varargs {
            s = s.varargs(ArgSpec::new("v", ArgType::Typed(v.not_null())));
        }
        s
    }

    fn sum_function() -> FunctionSpec {
        FunctionSpec::new("sum", udf_core::FunctionKind::Scalar)
            .signature(sig(&[DataType::int(), DataType::int()], None))
            .signature(sig(&[DataType::string(), DataType::string()], None))
            .signature(sig(&[], Some(DataType::double())))
    }

    #[test]
    fn exact_match_beats_widening_and_varargs() {
        let spec = sum_function();
        let r = resolve(
            "sum",
            &spec,
            &[Some(DataType::int()), Some(DataType::int())],
        )
        .unwrap();
        assert_eq!(r.signature, 0);
        assert_eq!(r.conversions, vec![Conversion::Keep, Conversion::Keep]);
        let r = resolve(
            "sum",
            &spec,
            &[Some(DataType::string()), Some(DataType::string())],
        )
        .unwrap();
        assert_eq!(r.signature, 1);
        // BIGINT does not narrow to INT; it widens to DOUBLE through the varargs signature.
        let r = resolve(
            "sum",
            &spec,
            &[Some(DataType::bigint()), Some(DataType::bigint())],
        )
        .unwrap();
        assert_eq!(r.signature, 2);
        assert_eq!(
            r.conversions[0],
            Conversion::Cast(DataType::double().not_null())
        );
        let r = resolve("sum", &spec, &vec![Some(DataType::double()); 3]).unwrap();
        assert_eq!(r.signature, 2);
    }

    #[test]
    fn no_match_lists_every_candidate() {
        let spec = sum_function();
        let error = resolve("sum", &spec, &[Some(DataType::boolean())]).unwrap_err();
        assert_eq!(
            error,
            "Invalid function call:\nsum(BOOLEAN)\nExpected signatures are:\n\
             sum(a0 INT NOT NULL, a1 INT NOT NULL) -> INT\n\
             sum(a0 STRING NOT NULL, a1 STRING NOT NULL) -> INT\n\
             sum(v DOUBLE NOT NULL...) -> INT"
        );
    }

    #[test]
    fn ties_are_ambiguous() {
        let spec = FunctionSpec::new("f", udf_core::FunctionKind::Scalar)
            .signature(sig(&[DataType::bigint()], None))
            .signature(sig(&[DataType::bigint()], None));
        assert!(
            resolve("f", &spec, &[Some(DataType::int())])
                .unwrap_err()
                .starts_with("Ambiguous function call")
        );
    }

    #[test]
    fn null_and_optional_arguments() {
        let spec = FunctionSpec::new("greet", udf_core::FunctionKind::Scalar).signature(
            Signature::new("eval")
                .arg(ArgSpec::new("name", ArgType::Typed(DataType::string())))
                .arg(ArgSpec::new("greeting", ArgType::Typed(DataType::string())).optional(true))
                .output(OutputType::Fixed(DataType::string())),
        );
        assert_eq!(
            resolve("greet", &spec, &[Some(DataType::string())])
                .unwrap()
                .signature,
            0
        );
        let r = resolve("greet", &spec, &[Some(DataType::string()), None]).unwrap();
        assert_eq!(r.conversions[1], Conversion::Cast(DataType::string()));
        assert!(resolve("greet", &spec, &[]).is_err());
    }
}
