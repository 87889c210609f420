use crate::*;

fn round_trip(text: &str) -> DataType {
    let parsed: DataType = text
        .parse()
        .unwrap_or_else(|e: ParseError| panic!("{text}: {}", e.pointer(text)));
    let printed = parsed.to_string();
    let reparsed: DataType = printed.parse().unwrap_or_else(|e| panic!("{printed}: {e}"));
    assert_eq!(parsed, reparsed, "{text} printed as {printed}");
    parsed
}

#[test]
fn every_type_prints_and_parses_back() {
    let cases = [
        "BOOLEAN",
        "TINYINT",
        "SMALLINT",
        "INT",
        "BIGINT",
        "FLOAT",
        "DOUBLE",
        "DECIMAL(12, 3)",
        "CHAR(5)",
        "VARCHAR(20)",
        "STRING",
        "BINARY(4)",
        "VARBINARY(8)",
        "BYTES",
        "DATE",
        "TIME(3)",
        "TIMESTAMP(9)",
        "TIMESTAMP_LTZ(3)",
        "INTERVAL YEAR(4) TO MONTH",
        "INTERVAL MONTH",
        "INTERVAL YEAR(1)",
        "INTERVAL DAY(5) TO SECOND(3)",
        "INTERVAL HOUR TO MINUTE",
        "INTERVAL SECOND(0)",
        "INTERVAL DAY(3)",
        "INTERVAL DAY(2) TO HOUR",
        "INTERVAL DAY(2) TO MINUTE",
        "INTERVAL HOUR",
        "INTERVAL HOUR TO SECOND(9)",
        "INTERVAL MINUTE",
        "INTERVAL MINUTE TO SECOND(2)",
        "ARRAY<INT NOT NULL>",
        "MULTISET<STRING>",
        "MAP<STRING NOT NULL, ARRAY<DOUBLE>>",
        "ROW<s STRING, t TIMESTAMP_LTZ(3)>",
        "ROW<`a b` INT 'the ''a'' field', c ROW<d BOOLEAN>> NOT NULL",
        "ROW<>",
        "RAW",
        "RAW('my.Type')",
        "RAW('my.Type', 'c25hcA==')",
        "NULL",
        "BIGINT NOT NULL",
    ];
    for case in cases {
        round_trip(case);
    }
}

#[test]
fn synonyms_and_defaults_follow_flink() {
    let same = [
        ("INTEGER", "INT"),
        ("DEC", "DECIMAL(10, 0)"),
        ("NUMERIC(5)", "DECIMAL(5, 0)"),
        ("DECIMAL", "DECIMAL(10, 0)"),
        ("CHAR", "CHAR(1)"),
        ("VARCHAR", "VARCHAR(1)"),
        ("VARCHAR(2147483647)", "STRING"),
        ("VARBINARY(2147483647)", "BYTES"),
        ("DOUBLE PRECISION", "DOUBLE"),
        ("TIME", "TIME(0)"),
        ("TIMESTAMP", "TIMESTAMP(6)"),
        ("TIMESTAMP(3) WITHOUT TIME ZONE", "TIMESTAMP(3)"),
        ("TIMESTAMP(3) WITH LOCAL TIME ZONE", "TIMESTAMP_LTZ(3)"),
        ("TIMESTAMP_LTZ", "TIMESTAMP_LTZ(6)"),
        ("INT ARRAY", "ARRAY<INT>"),
        (
            "INT NOT NULL ARRAY NOT NULL",
            "ARRAY<INT NOT NULL> NOT NULL",
        ),
        ("ROW(a INT, b STRING)", "ROW<a INT, b STRING>"),
        ("int null", "INT"),
        ("INTERVAL DAY TO SECOND", "INTERVAL DAY(2) TO SECOND(6)"),
        ("INTERVAL YEAR TO MONTH", "INTERVAL YEAR(2) TO MONTH"),
    ];
    for (a, b) in same {
        assert_eq!(round_trip(a), round_trip(b), "{a} vs {b}");
    }
}

#[test]
fn malformed_types_name_the_offending_token() {
    let cases = [
        ("STIRNG", 0, "unknown data type `STIRNG`"),
        ("ROW<a STIRNG>", 6, "unknown data type `STIRNG`"),
        (
            "DECIMAL(40, 2)",
            8,
            "decimal precision must be between 1 and 38, found 40",
        ),
        (
            "DECIMAL(5, 6)",
            11,
            "decimal scale must be between 0 and 5, found 6",
        ),
        ("ARRAY<INT", 9, "expected `>`, found the end of the type"),
        ("MAP<INT>", 7, "expected `,`"),
        ("ROW<a INT, a STRING>", 11, "duplicate field name `a`"),
        (
            "TIMESTAMP(12)",
            10,
            "precision must be between 0 and 9, found 12",
        ),
        ("INT NOT", 7, "expected `NULL`, found the end of the type"),
        ("INT INT", 4, "unexpected text after the data type"),
        (
            "TIMESTAMP WITH TIME ZONE",
            10,
            "TIMESTAMP WITH TIME ZONE is not supported",
        ),
        (
            "INTERVAL SECOND TO DAY",
            16,
            "unexpected text after the data type",
        ),
        ("INTERVAL HOUR TO DAY", 17, "expected a field after HOUR"),
        ("RAW(x)", 4, "expected the type name as a string literal"),
        (
            "ROW<a INT 'unterminated>",
            10,
            "unterminated string literal",
        ),
        ("INT;", 3, "unexpected character `;`"),
    ];
    for (text, offset, message) in cases {
        let err = text.parse::<DataType>().expect_err(text);
        assert!(
            err.message.starts_with(message),
            "{text}: got `{}`",
            err.message
        );
        assert_eq!(err.offset, offset, "{text}: {}", err.pointer(text));
    }
}

#[test]
fn pointer_underlines_the_token() {
    let err = "ROW<a STIRNG>".parse::<DataType>().unwrap_err();
    assert_eq!(err.pointer("ROW<a STIRNG>"), "ROW<a STIRNG>\n      ^^^^^^");
}

#[test]
fn root_sets_are_const() {
    const TEXT: RootSet = RootSet::CHARACTER;
    assert!(TEXT.contains(TypeRoot::VarChar));
    assert!(!TEXT.contains(TypeRoot::Int));
    assert!(RootSet::ALL.contains(TypeRoot::Null));
}

#[cfg(feature = "arrow")]
mod arrow_mapping {
    use crate::*;
    use arrow_schema::{DataType as A, TimeUnit};

    #[test]
    fn sql_to_arrow_and_back() {
        let cases = [
            "BOOLEAN",
            "TINYINT",
            "SMALLINT",
            "INT",
            "BIGINT",
            "FLOAT",
            "DOUBLE",
            "DECIMAL(12, 3)",
            "STRING",
            "BYTES",
            "DATE",
            "TIME(0)",
            "TIME(3)",
            "TIME(6)",
            "TIME(9)",
            "TIMESTAMP(3)",
            "TIMESTAMP(9)",
            "TIMESTAMP_LTZ(6)",
            "ARRAY<INT NOT NULL>",
            "MAP<STRING NOT NULL, BIGINT>",
            "ROW<s STRING, t TIMESTAMP_LTZ(3) NOT NULL>",
            "BINARY(4)",
            "NULL",
        ];
        for case in cases {
            let ty: DataType = case.parse().unwrap();
            let arrow = ty.to_arrow();
            let back = DataType::from_arrow_field(&ty.to_arrow_field("f")).unwrap();
            if case == "BINARY(4)" {
                // Fixed-size binary comes back as BYTES: the length is not kept.
                assert_eq!(back, DataType::bytes());
                continue;
            }
            assert_eq!(back, ty, "{case} -> {arrow} -> {back}");
        }
    }

    #[test]
    fn arrow_physical_variants_map_to_one_sql_type() {
        assert_eq!(
            DataType::from_arrow(&A::Utf8View).unwrap(),
            DataType::string()
        );
        assert_eq!(
            DataType::from_arrow(&A::LargeUtf8).unwrap(),
            DataType::string()
        );
        assert_eq!(
            DataType::from_arrow(&A::Timestamp(TimeUnit::Nanosecond, Some("+00:00".into())))
                .unwrap(),
            DataType::timestamp_ltz(9)
        );
        assert!(DataType::from_arrow(&A::UInt32).is_err());
    }
}
