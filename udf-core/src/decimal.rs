//! An exact decimal number: what SQL `DECIMAL(p, s)` values are in Rust.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::Error;

/// The largest number of digits a [`Decimal`] holds (Arrow's `Decimal128`).
pub const MAX_PRECISION: u8 = 38;

/// `unscaled × 10^-scale`, e.g. `Decimal::new(12345, 3)` is 12.345.
///
/// The default SQL type of a `Decimal` is `DECIMAL(38, 18)`, as for Java's `BigDecimal` in
/// Flink; a `#[data_type("DECIMAL(p, s)")]` hint fixes another precision and scale, and
/// results are rounded half-up to that scale (as Flink does).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct Decimal {
    unscaled: i128,
    scale: u8,
}

impl Decimal {
    pub const fn new(unscaled: i128, scale: u8) -> Self {
        Decimal { unscaled, scale }
    }

    pub const fn unscaled(&self) -> i128 {
        self.unscaled
    }

    pub const fn scale(&self) -> u8 {
        self.scale
    }

    /// The shortest decimal that reads back as `value` (Java's `BigDecimal.valueOf(double)`).
    pub fn from_f64(value: f64) -> Result<Self, Error> {
        if !value.is_finite() {
            return Err(Error::msg(format!("{value} is not a finite number")));
        }
        format!("{value}").parse()
    }

    pub fn to_f64(&self) -> f64 {
        self.unscaled as f64 / 10f64.powi(self.scale as i32)
    }

    /// Number of decimal digits of the unscaled value.
    pub fn digits(&self) -> u8 {
        let mut n = self.unscaled.unsigned_abs();
        let mut digits = 1;
        while n >= 10 {
            n /= 10;
            digits += 1;
        }
        digits
    }

    /// The value at another scale, rounding half away from zero when digits are dropped.
    pub fn rescale(&self, scale: u8) -> Result<Self, Error> {
        let overflow = || Error::msg(format!("{self} does not fit a decimal with scale {scale}"));
        let unscaled = match scale.cmp(&self.scale) {
            Ordering::Equal => self.unscaled,
            Ordering::Greater => {
                let factor = pow10(scale - self.scale).ok_or_else(overflow)?;
                self.unscaled.checked_mul(factor).ok_or_else(overflow)?
            }
            Ordering::Less => {
                let factor = pow10(self.scale - scale).ok_or_else(overflow)?;
                let quotient = self.unscaled / factor;
                let remainder = self.unscaled % factor;
                if remainder.unsigned_abs() * 2 >= factor.unsigned_abs() {
                    quotient + self.unscaled.signum()
                } else {
                    quotient
                }
            }
        };
        Ok(Decimal { unscaled, scale })
    }

    /// The value as `DECIMAL(precision, scale)`: rescaled, and an error if it needs more digits.
    pub fn fit(&self, precision: u8, scale: u8) -> Result<Self, Error> {
        let value = self.rescale(scale)?;
        if value.digits() > precision {
            return Err(Error::msg(format!(
                "{self} does not fit DECIMAL({precision}, {scale})"
            )));
        }
        Ok(value)
    }
}

fn pow10(exp: u8) -> Option<i128> {
    10i128.checked_pow(exp as u32)
}

impl PartialEq for Decimal {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Decimal {}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Decimal {
    /// Numeric order: 1.50 equals 1.5.
    fn cmp(&self, other: &Self) -> Ordering {
        let scale = self.scale.max(other.scale);
        match (self.rescale(scale), other.rescale(scale)) {
            (Ok(a), Ok(b)) => a.unscaled.cmp(&b.unscaled),
            // Only values beyond i128 at the common scale fail; compare approximately.
            _ => self.to_f64().total_cmp(&other.to_f64()),
        }
    }
}

impl std::hash::Hash for Decimal {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        // Equal values hash equally: strip trailing zeros first.
        let (mut unscaled, mut scale) = (self.unscaled, self.scale);
        while scale > 0 && unscaled % 10 == 0 {
            unscaled /= 10;
            scale -= 1;
        }
        (unscaled, scale).hash(state);
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = self.unscaled.unsigned_abs().to_string();
        let sign = if self.unscaled < 0 { "-" } else { "" };
        let scale = self.scale as usize;
        if scale == 0 {
            write!(f, "{sign}{digits}")
        } else if digits.len() > scale {
            let (int, frac) = digits.split_at(digits.len() - scale);
            write!(f, "{sign}{int}.{frac}")
        } else {
            write!(f, "{sign}0.{}{digits}", "0".repeat(scale - digits.len()))
        }
    }
}

impl FromStr for Decimal {
    type Err = Error;

    /// Reads `-12.345`, `1e-3`, `+7`.
    fn from_str(s: &str) -> Result<Self, Error> {
        let invalid = || Error::msg(format!("`{s}` is not a decimal number"));
        let (mantissa, exponent) = match s.find(['e', 'E']) {
            Some(i) => (&s[..i], s[i + 1..].parse::<i32>().map_err(|_| invalid())?),
            None => (s, 0),
        };
        let (negative, mantissa) = match mantissa.as_bytes().first() {
            Some(b'-') => (true, &mantissa[1..]),
            Some(b'+') => (false, &mantissa[1..]),
            _ => (false, mantissa),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        if int.is_empty() && frac.is_empty()
            || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
        {
            return Err(invalid());
        }
        let digits = format!("{int}{frac}");
        let digits = digits.trim_start_matches('0');
        let mut unscaled: i128 = if digits.is_empty() {
            0
        } else {
            digits
                .parse()
                .map_err(|_| Error::msg(format!("`{s}` has more than {MAX_PRECISION} digits")))?
        };
        let mut scale = frac.len() as i32 - exponent;
        if scale < 0 {
            unscaled = unscaled
                .checked_mul(
                    pow10(u8::try_from(-scale).map_err(|_| invalid())?).ok_or_else(invalid)?,
                )
                .ok_or_else(invalid)?;
            scale = 0;
        }
        let scale = u8::try_from(scale).map_err(|_| invalid())?;
        if scale > MAX_PRECISION {
            return Decimal::new(if negative { -unscaled } else { unscaled }, scale)
                .rescale(MAX_PRECISION);
        }
        Ok(Decimal::new(
            if negative { -unscaled } else { unscaled },
            scale,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_prints_and_rounds() {
        let d: Decimal = "12.3456".parse().unwrap();
        assert_eq!(d.to_string(), "12.3456");
        assert_eq!(d.rescale(3).unwrap().to_string(), "12.346");
        assert_eq!(
            "-0.0005"
                .parse::<Decimal>()
                .unwrap()
                .rescale(3)
                .unwrap()
                .to_string(),
            "-0.001"
        );
        assert_eq!("1e3".parse::<Decimal>().unwrap().to_string(), "1000");
        assert_eq!("1.5e-2".parse::<Decimal>().unwrap().to_string(), "0.015");
        assert_eq!(
            Decimal::from_f64(0.1 + 0.2).unwrap().to_string(),
            "0.30000000000000004"
        );
        assert!("1.2.3".parse::<Decimal>().is_err());
        assert!("abc".parse::<Decimal>().is_err());
    }

    #[test]
    fn fits_precision_or_fails() {
        let d: Decimal = "12345.678".parse().unwrap();
        assert_eq!(d.fit(12, 3).unwrap().to_string(), "12345.678");
        assert!(d.fit(5, 3).is_err());
    }

    #[test]
    fn equal_values_compare_and_hash_equal() {
        use std::collections::HashSet;
        let a: Decimal = "1.50".parse().unwrap();
        let b: Decimal = "1.5".parse().unwrap();
        assert_eq!(a, b);
        assert_eq!(HashSet::from([a]).len(), HashSet::from([a, b]).len());
        assert!(a < "1.51".parse().unwrap());
    }
}
