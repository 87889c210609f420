//! Durations as Flink's configuration writes them (`500 ms`, `10s`, `1 day`, `PT3M`): used
//! by session options and by `#[state(ttl = "...")]`, which the macro checks at compile time.

use std::time::Duration;

/// A duration as Flink writes them: a number and a unit (`ns`, `us`, `ms`, `s`, `min`/`m`,
/// `h`, `d`, and their long forms; none means milliseconds), or ISO-8601 such as `PT3M`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let invalid = || format!("`{text}` is not a duration such as `500 ms`, `10s` or `1 min`");
    let too_long = || format!("`{text}` is longer than the longest duration (about 584 years)");
    if let Some(iso) = text.strip_prefix("PT").or_else(|| text.strip_prefix("pt")) {
        return match parse_iso(iso) {
            Iso::Valid(duration) => Ok(duration),
            Iso::Invalid => Err(invalid()),
            Iso::TooLong => Err(too_long()),
        };
    }
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    if number.is_empty() {
        return Err(invalid());
    }
    let amount: u64 = number.parse().map_err(|_| too_long())?;
    let unit = unit.trim().to_ascii_lowercase();
    let seconds = |per: u64| amount.checked_mul(per).map(Duration::from_secs);
    let duration = match unit.as_str() {
        "ns" | "nano" | "nanos" | "nanosecond" | "nanoseconds" => {
            Some(Duration::from_nanos(amount))
        }
        "us" | "µs" | "micro" | "micros" | "microsecond" | "microseconds" => {
            Some(Duration::from_micros(amount))
        }
        "" | "ms" | "milli" | "millis" | "millisecond" | "milliseconds" => {
            Some(Duration::from_millis(amount))
        }
        "s" | "sec" | "secs" | "second" | "seconds" => seconds(1),
        "m" | "min" | "mins" | "minute" | "minutes" => seconds(60),
        "h" | "hour" | "hours" => seconds(3600),
        "d" | "day" | "days" => seconds(86_400),
        _ => return Err(invalid()),
    };
    duration.ok_or_else(too_long)
}

enum Iso {
    Valid(Duration),
    Invalid,
    TooLong,
}

/// The time part of an ISO-8601 duration after `PT`: `3M`, `1H30M`, `0.5S` — hours, minutes
/// and seconds at most once each and in that order, a fraction on the seconds only.
fn parse_iso(text: &str) -> Iso {
    let mut total = Duration::ZERO;
    let mut number = String::new();
    // The units still allowed, in order.
    let mut units = "HMS";
    for c in text.chars() {
        match c.to_ascii_uppercase() {
            '0'..='9' | '.' => number.push(c),
            unit @ ('H' | 'M' | 'S') => {
                let Some(at) = units.find(unit) else {
                    return Iso::Invalid;
                };
                units = &units[at + 1..];
                if number.contains('.') && unit != 'S' {
                    return Iso::Invalid;
                }
                let Ok(value) = number.parse::<f64>() else {
                    return Iso::Invalid;
                };
                number.clear();
                let seconds = match unit {
                    'H' => value * 3600.0,
                    'M' => value * 60.0,
                    _ => value,
                };
                let Some(sum) = Duration::try_from_secs_f64(seconds)
                    .ok()
                    .and_then(|part| total.checked_add(part))
                else {
                    return Iso::TooLong;
                };
                total = sum;
            }
            _ => return Iso::Invalid,
        }
    }
    if number.is_empty() && !text.is_empty() {
        Iso::Valid(total)
    } else {
        Iso::Invalid
    }
}

/// The shortest exact form of `duration` in the units `parse_duration` reads: `1 d`,
/// `90 min`, `1500 ms`.
pub fn format_duration(duration: Duration) -> String {
    let nanos = duration.as_nanos();
    const UNITS: [(u128, &str); 7] = [
        (86_400_000_000_000, "d"),
        (3_600_000_000_000, "h"),
        (60_000_000_000, "min"),
        (1_000_000_000, "s"),
        (1_000_000, "ms"),
        (1_000, "us"),
        (1, "ns"),
    ];
    for (size, unit) in UNITS {
        if nanos >= size && nanos.is_multiple_of(size) {
            return format!("{} {unit}", nanos / size);
        }
    }
    "0 ms".to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_long_durations_are_errors_not_overflows() {
        for text in [
            "999999999999999 d",
            "18446744073709551615 h",
            "99999999999999999999999 ms",
            "PT10000000000000000000S10000000000000000000S",
            "PT10000000000000000000H",
            "PT1e400S",
        ] {
            let error = parse_duration(text).expect_err(text);
            assert!(error.contains(text.trim()), "{error}");
        }
        assert!(
            parse_duration("999999999999999 d")
                .unwrap_err()
                .contains("longest duration")
        );
        assert_eq!(
            parse_duration("18446744073709551615 ns"),
            Ok(Duration::from_nanos(u64::MAX))
        );
    }

    #[test]
    fn durations_as_flink_writes_them() {
        assert_eq!(parse_duration("1m"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_duration("500 ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("3 min"), Ok(Duration::from_secs(180)));
        assert_eq!(parse_duration("250"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("PT3M"), Ok(Duration::from_secs(180)));
        assert_eq!(parse_duration("PT1H30M"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("PT0.5S"), Ok(Duration::from_millis(500)));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("5 parsecs").is_err());
        assert!(parse_duration("PT").is_err());
        assert_eq!(parse_duration("1 day"), Ok(Duration::from_secs(86_400)));
        assert!(parse_duration("PT1S1S").is_err(), "a unit twice");
        assert!(parse_duration("PT1S1M").is_err(), "units out of order");
        assert!(parse_duration("PT0.5M").is_err(), "a fraction of a minute");
        assert!(parse_duration("ms").is_err());
        for text in ["1 d", "90 min", "1500 ms", "0 ms"] {
            assert_eq!(format_duration(parse_duration(text).unwrap()), text);
        }
    }
}
