//! Hostile input for the type and duration parsers: random token soup, mutations of valid
//! strings and deep nesting. Neither parser may panic or recurse without bound, and what
//! parses must print and parse back to itself. Bounded for CI; `UDF_FUZZ_ITERATIONS` runs
//! longer.

use std::time::Duration;

use crate::*;

/// A small xorshift generator: the same inputs on every run, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

fn iterations(default: usize) -> usize {
    std::env::var("UDF_FUZZ_ITERATIONS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

/// Runs `f` on a thread with a small stack (a quarter of tokio's worker stack), so that
/// recursion without a bound fails the test instead of passing on a big main stack.
fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(512 * 1024)
        .spawn(f)
        .expect("thread")
        .join()
        .expect("the parser panicked or overflowed its stack");
}

const VALID: &[&str] = &[
    "ARRAY<INT NOT NULL>",
    "MAP<STRING, ARRAY<DECIMAL(12, 3)>>",
    "ROW<a INT, `b c` STRING 'desc', d ROW(e TIMESTAMP_LTZ(3))>",
    "INT ARRAY MULTISET",
    "INTERVAL DAY(2) TO SECOND(3)",
    "TIMESTAMP(9) WITHOUT TIME ZONE NOT NULL",
    "RAW('a.b.C', 'snap')",
    "MULTISET<MAP<INT, ROW<x BYTES>>>",
];

const TOKENS: &[&str] = &[
    "ARRAY",
    "MAP",
    "ROW",
    "MULTISET",
    "INT",
    "STRING",
    "DECIMAL",
    "TIMESTAMP",
    "INTERVAL",
    "DAY",
    "TO",
    "SECOND",
    "NOT",
    "NULL",
    "RAW",
    "<",
    ">",
    "(",
    ")",
    ",",
    " ",
    "`x`",
    "'s'",
    "99999999999999999999",
    "3",
    "0",
    "WITH",
    "LOCAL",
    "TIME",
    "ZONE",
    "é",
    "a",
    "`",
    "'",
];

/// Whatever parses prints as a string that parses to the same type.
fn check_type(text: &str) {
    if let Ok(parsed) = parse(text) {
        let printed = parsed.to_string();
        assert_eq!(
            parse(&printed).as_ref(),
            Ok(&parsed),
            "{text:?} printed as {printed:?}"
        );
    }
}

#[test]
fn the_type_parser_takes_any_string() {
    on_small_stack(|| {
        let mut rng = Rng(0x7ea5_0001);
        for _ in 0..iterations(20_000) {
            let text = match rng.below(2) {
                0 => (0..rng.below(40))
                    .map(|_| rng.pick(TOKENS))
                    .collect::<Vec<_>>()
                    .join(" "),
                _ => {
                    // A valid type with a byte range cut out or repeated.
                    let valid = rng.pick(VALID);
                    let (a, b) = (rng.below(valid.len()), rng.below(valid.len()));
                    let (a, b) = (a.min(b), a.max(b));
                    let (a, b) = (floor_char(valid, a), floor_char(valid, b));
                    if rng.below(2) == 0 {
                        format!("{}{}", &valid[..a], &valid[b..])
                    } else {
                        format!("{}{}{}", &valid[..b], &valid[a..b], &valid[b..])
                    }
                }
            };
            check_type(&text);
        }
    });
}

fn floor_char(text: &str, mut index: usize) -> usize {
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

#[test]
fn deep_nesting_is_an_error_naming_the_limit() {
    on_small_stack(|| {
        for depth in [MAX_NESTING + 1, 300, 10_000] {
            for (open, close) in [
                ("ARRAY<", ">"),
                ("MULTISET<", ">"),
                ("MAP<INT, ", ">"),
                ("ROW<f ", ">"),
                ("ROW(f ", ")"),
            ] {
                let closed = format!("{}INT{}", open.repeat(depth), close.repeat(depth));
                let unclosed = open.repeat(depth);
                for text in [closed, unclosed] {
                    let error = parse(&text).expect_err("too deep");
                    assert!(
                        error
                            .message
                            .contains(&format!("deeper than {MAX_NESTING} levels")),
                        "{}: {error}",
                        &text[..40]
                    );
                }
            }
            let postfix = format!("INT{}", " ARRAY".repeat(depth));
            assert!(parse(&postfix).is_err(), "postfix ARRAY × {depth}");
        }
        // The limit itself is fine, in every form.
        let deepest = format!(
            "{}INT{}",
            "ARRAY<".repeat(MAX_NESTING),
            ">".repeat(MAX_NESTING)
        );
        check_type(&deepest);
        assert!(parse(&format!("INT{}", " MULTISET".repeat(MAX_NESTING))).is_ok());
    });
}

#[test]
fn a_wide_row_parses_in_linear_time() {
    let fields: Vec<String> = (0..100_000).map(|i| format!("f{i} INT")).collect();
    let text = format!("ROW<{}>", fields.join(", "));
    let start = std::time::Instant::now();
    let parsed = parse(&text).expect("a wide row");
    assert!(matches!(&parsed.kind, TypeKind::Row(fields) if fields.len() == 100_000));
    // Generous: the quadratic check took close to a minute on this input.
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    let duplicate = format!("ROW<{}, f7 STRING>", fields.join(", "));
    let error = parse(&duplicate).expect_err("a duplicate field");
    assert!(
        error.message.contains("duplicate field name `f7`"),
        "{error}"
    );
}

#[test]
fn the_duration_parser_takes_any_string() {
    let pieces = [
        "0",
        "1",
        "18446744073709551615",
        "999999999999999",
        "10000000000000000000",
        ".",
        "5",
        " ",
        "ms",
        "s",
        "min",
        "h",
        "d",
        "days",
        "ns",
        "PT",
        "H",
        "M",
        "S",
        "pt",
        "x",
        "-",
    ];
    let mut rng = Rng(0xd0_2a71);
    for _ in 0..iterations(100_000) {
        let text: String = (0..rng.below(8)).map(|_| rng.pick(&pieces)).collect();
        let outcome = std::panic::catch_unwind(|| parse_duration(&text));
        let parsed = outcome.unwrap_or_else(|_| panic!("parse_duration panicked on {text:?}"));
        if let Ok(duration) = parsed {
            assert_eq!(
                parse_duration(&format_duration(duration)),
                Ok(duration),
                "{text:?}"
            );
        }
    }
}
