//! The SQL dialect of a session: DataFusion's default (generic) dialect, plus table
//! arguments of set-semantics calls in FROM:
//!
//! ```sql
//! SELECT * FROM Top2(TABLE MyTable PARTITION BY myField)
//! SELECT * FROM f(input => TABLE (SELECT a, b FROM t) PARTITION BY (a, b) ORDER BY ts)
//! ```
//!
//! A table argument becomes an ordinary expression the rest of the parser accepts:
//! `__table_argument((SELECT * FROM MyTable)) OVER (PARTITION BY myField)`. The table is a
//! subquery so that the engine resolves its tables like any other.

use std::any::TypeId;

use datafusion::sql::sqlparser::ast::{
    Expr, Function, FunctionArg, FunctionArgExpr, FunctionArgumentList, FunctionArguments, Ident,
    ObjectName, WindowSpec, WindowType,
};
use datafusion::sql::sqlparser::dialect::{Dialect, GenericDialect};
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::parser::{Parser, ParserError};
use datafusion::sql::sqlparser::tokenizer::Token;

/// The name of the function a table argument is encoded as.
pub const TABLE_ARGUMENT: &str = "__table_argument";

/// The generic dialect with table arguments.
#[derive(Debug, Default)]
pub struct UdfDialect;

/// Forwards to the generic dialect every method it overrides, so that everything else
/// parses exactly as DataFusion's default dialect parses it.
macro_rules! forward_to_generic {
    ($($name:ident($($arg:ident: $ty:ty)?)),* $(,)?) => {
        $(
            fn $name(&self $(, $arg: $ty)?) -> bool {
                GenericDialect.$name($($arg)?)
            }
        )*
    };
}

impl Dialect for UdfDialect {
    /// The parser tailors some rules to the dialect's type: it must see the generic one.
    fn dialect(&self) -> TypeId {
        TypeId::of::<GenericDialect>()
    }

    fn parse_prefix(&self, parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
        if !parser.peek_keyword(Keyword::TABLE) {
            return None;
        }
        match parser.peek_nth_token(1).token {
            Token::Word(_) | Token::LParen => {}
            _ => return None,
        }
        Some(table_argument(parser))
    }

    // The methods sqlparser 0.62's GenericDialect overrides (regenerate on upgrades).
    forward_to_generic! {
    is_delimited_identifier_start(ch: char),
    is_identifier_start(ch: char),
    is_identifier_part(ch: char),
    supports_unicode_string_literal(),
    supports_partition_by_after_order_by(),
    supports_array_join_syntax(),
    supports_group_by_expr(),
    supports_group_by_with_modifier(),
    supports_left_associative_joins_without_parens(),
    supports_connect_by(),
    supports_match_recognize(),
    supports_pipe_operator(),
    supports_start_transaction_modifier(),
    supports_window_function_null_treatment_arg(),
    supports_dictionary_syntax(),
    supports_window_clause_named_window_reference(),
    supports_parenthesized_set_variables(),
    supports_select_wildcard_except(),
    support_map_literal_syntax(),
    allow_extract_custom(),
    allow_extract_single_quotes(),
    supports_extract_comma_syntax(),
    supports_create_view_comment_syntax(),
    supports_parens_around_table_factor(),
    supports_values_as_table_factor(),
    supports_create_index_with_clause(),
    supports_explain_with_utility_options(),
    supports_limit_comma(),
    supports_update_order_by(),
    supports_from_first_select(),
    supports_projection_trailing_commas(),
    supports_asc_desc_in_column_definition(),
    supports_try_convert(),
    supports_bitwise_shift_operators(),
    supports_comment_on(),
    supports_load_extension(),
    supports_named_fn_args_with_assignment_operator(),
    supports_struct_literal(),
    supports_empty_projections(),
    supports_nested_comments(),
    supports_multiline_comment_hints(),
    supports_user_host_grantee(),
    supports_string_escape_constant(),
    supports_array_typedef_with_brackets(),
    supports_match_against(),
    supports_set_names(),
    supports_comma_separated_set_assignments(),
    supports_filter_during_aggregation(),
    supports_select_wildcard_exclude(),
    supports_data_type_signed_suffix(),
    supports_interval_options(),
    supports_quote_delimited_string(),
    supports_select_wildcard_replace(),
    supports_select_wildcard_ilike(),
    supports_select_wildcard_rename(),
    supports_optimize_table(),
    supports_install(),
    supports_detach(),
    supports_prewhere(),
    supports_with_fill(),
    supports_limit_by(),
    supports_interpolate(),
    supports_settings(),
    supports_select_format(),
    supports_comment_optimizer_hint(),
    supports_constraint_keyword_without_name(),
    supports_key_column_option(),
    supports_comma_separated_trim(),
    supports_cte_without_as(),
    supports_select_item_multi_column_alias(),
    supports_xml_expressions(),    }
}

/// `TABLE`, then a name or a parenthesized query, then `PARTITION BY` and `ORDER BY`, each
/// with one item or a parenthesized list (a bare comma ends the argument, as in Flink).
fn table_argument(parser: &mut Parser) -> Result<Expr, ParserError> {
    parser.expect_keyword(Keyword::TABLE)?;
    let query = if parser.consume_token(&Token::LParen) {
        let query = parser.parse_query()?;
        parser.expect_token(&Token::RParen)?;
        query
    } else {
        let name = parser.parse_object_name(false)?;
        Parser::new(&GenericDialect)
            .try_with_sql(&format!("SELECT * FROM {name}"))?
            .parse_query()?
    };
    let mut partition_by = Vec::new();
    if parser.parse_keywords(&[Keyword::PARTITION, Keyword::BY]) {
        if parser.consume_token(&Token::LParen) {
            partition_by = parser.parse_comma_separated(Parser::parse_expr)?;
            parser.expect_token(&Token::RParen)?;
        } else {
            partition_by.push(parser.parse_expr()?);
        }
    }
    let mut order_by = Vec::new();
    if parser.parse_keywords(&[Keyword::ORDER, Keyword::BY]) {
        if parser.consume_token(&Token::LParen) {
            order_by = parser.parse_comma_separated(Parser::parse_order_by_expr)?;
            parser.expect_token(&Token::RParen)?;
        } else {
            order_by.push(parser.parse_order_by_expr()?);
        }
    }
    Ok(Expr::Function(Function {
        name: ObjectName::from(vec![Ident::new(TABLE_ARGUMENT)]),
        uses_odbc_syntax: false,
        parameters: FunctionArguments::None,
        args: FunctionArguments::List(FunctionArgumentList {
            duplicate_treatment: None,
            args: vec![FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Subquery(
                query,
            )))],
            clauses: vec![],
        }),
        filter: None,
        null_treatment: None,
        over: Some(WindowType::WindowSpec(WindowSpec {
            window_name: None,
            partition_by,
            order_by,
            window_frame: None,
        })),
        within_group: vec![],
    }))
}
