//! Function metadata: what the catalog shows and what call resolution works from.

use std::fmt;

use crate::types::DataType;

/// The seven kinds of user-defined function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FunctionKind {
    Scalar,
    AsyncScalar,
    Table,
    AsyncTable,
    Aggregate,
    TableAggregate,
    ProcessTable,
}

impl fmt::Display for FunctionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FunctionKind::Scalar => "scalar",
            FunctionKind::AsyncScalar => "async scalar",
            FunctionKind::Table => "table",
            FunctionKind::AsyncTable => "async table",
            FunctionKind::Aggregate => "aggregate",
            FunctionKind::TableAggregate => "table aggregate",
            FunctionKind::ProcessTable => "process table",
        })
    }
}

/// Everything the framework knows about a function, derived from its Rust definition.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionSpec {
    /// The default SQL name (the Rust name unless `name = "..."` says otherwise).
    pub name: String,
    pub kind: FunctionKind,
    /// One entry per evaluation method; more than one means overloads.
    pub signatures: Vec<Signature>,
    /// `false` ⇒ evaluated per row, never ahead of time.
    pub deterministic: bool,
    /// `false` ⇒ never evaluated at planning time, even when deterministic.
    pub constant_folding: bool,
    /// The doc comment of the Rust item, if any.
    pub description: Option<String>,
    /// Optional abilities (aggregate functions).
    pub capabilities: Capabilities,
    /// State entries, in declaration order (process table functions).
    pub state: Vec<StateSpec>,
    /// Whether the function has `on_timer` (process table functions).
    pub on_timer: bool,
}

/// What an aggregate function can do beyond accumulating.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Capabilities {
    /// `retract`: bounded OVER frames.
    pub retract: bool,
    /// `merge`: combining partial aggregates (several partitions, two-phase aggregation).
    pub merge: bool,
}

impl FunctionSpec {
    pub fn new(name: impl Into<String>, kind: FunctionKind) -> Self {
        FunctionSpec {
            name: name.into(),
            kind,
            signatures: Vec::new(),
            deterministic: true,
            constant_folding: true,
            description: None,
            capabilities: Capabilities::default(),
            state: Vec::new(),
            on_timer: false,
        }
    }

    pub fn on_timer(mut self, on_timer: bool) -> Self {
        self.on_timer = on_timer;
        self
    }

    pub fn state(mut self, state: StateSpec) -> Self {
        self.state.push(state);
        self
    }

    /// The table arguments of the first signature (process table functions), with their
    /// positions among the arguments.
    pub fn table_args(&self) -> impl Iterator<Item = (usize, &ArgSpec, &TableArg)> {
        self.signatures
            .first()
            .into_iter()
            .flat_map(|s| s.args.iter().enumerate())
            .filter_map(|(i, a)| match &a.ty {
                ArgType::Table(table) => Some((i, a, table)),
                _ => None,
            })
    }

    pub fn capabilities(mut self, capabilities: Capabilities) -> Self {
        self.capabilities = capabilities;
        self
    }

    pub fn signature(mut self, signature: Signature) -> Self {
        self.signatures.push(signature);
        self
    }

    pub fn deterministic(mut self, deterministic: bool) -> Self {
        self.deterministic = deterministic;
        self
    }

    pub fn constant_folding(mut self, constant_folding: bool) -> Self {
        self.constant_folding = constant_folding;
        self
    }

    pub fn description(mut self, description: impl Into<String>) -> Self {
        let text = description.into();
        self.description = (!text.trim().is_empty()).then(|| text.trim().to_owned());
        self
    }

    /// Whether calls may name their arguments: only without overloads and varargs.
    pub fn supports_named_arguments(&self) -> bool {
        self.signatures.len() == 1 && self.signatures[0].varargs.is_none()
    }

    /// One line per signature, as `name(arg TYPE, ...) -> TYPE`.
    pub fn signature_lines(&self, name: &str) -> Vec<String> {
        self.signatures
            .iter()
            .map(|s| s.display(name).to_string())
            .collect()
    }
}

/// One evaluation method: its parameters and result.
#[derive(Clone, Debug, PartialEq)]
pub struct Signature {
    /// The Rust method that implements it (`eval`, `eval_strings`, ...).
    pub method: String,
    pub args: Vec<ArgSpec>,
    /// A trailing variable-length parameter.
    pub varargs: Option<ArgSpec>,
    pub output: OutputType,
}

impl Signature {
    pub fn new(method: impl Into<String>) -> Self {
        Signature {
            method: method.into(),
            args: Vec::new(),
            varargs: None,
            output: OutputType::Custom,
        }
    }

    pub fn arg(mut self, arg: ArgSpec) -> Self {
        self.args.push(arg);
        self
    }

    pub fn varargs(mut self, arg: ArgSpec) -> Self {
        self.varargs = Some(arg);
        self
    }

    pub fn output(mut self, output: OutputType) -> Self {
        self.output = output;
        self
    }

    /// Number of arguments a call must pass (trailing optional ones may be left out).
    pub fn required_args(&self) -> usize {
        self.args
            .iter()
            .rposition(|a| !a.optional)
            .map_or(0, |i| i + 1)
    }

    pub fn display<'a>(&'a self, name: &'a str) -> impl fmt::Display + 'a {
        SignatureDisplay {
            name,
            signature: self,
        }
    }
}

struct SignatureDisplay<'a> {
    name: &'a str,
    signature: &'a Signature,
}

impl fmt::Display for SignatureDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}(", self.name)?;
        let mut first = true;
        for arg in &self.signature.args {
            if !first {
                f.write_str(", ")?;
            }
            first = false;
            write!(f, "{arg}")?;
        }
        if let Some(varargs) = &self.signature.varargs {
            if !first {
                f.write_str(", ")?;
            }
            write!(f, "{varargs}...")?;
        }
        write!(f, ") -> {}", self.signature.output)
    }
}

/// One parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct ArgSpec {
    pub name: String,
    pub ty: ArgType,
    /// May be left out of a call; it then receives NULL.
    pub optional: bool,
}

impl ArgSpec {
    pub fn new(name: impl Into<String>, ty: ArgType) -> Self {
        ArgSpec {
            name: name.into(),
            ty,
            optional: false,
        }
    }

    pub fn optional(mut self, optional: bool) -> Self {
        self.optional = optional;
        self
    }

    /// A NULL argument skips the call and yields NULL (the parameter is not an `Option`).
    pub fn is_strict(&self) -> bool {
        !self.ty.nullable()
    }
}

impl fmt::Display for ArgSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.name, self.ty)?;
        if self.optional {
            f.write_str(" OPTIONAL")?;
        }
        Ok(())
    }
}

/// The type a parameter accepts.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgType {
    /// Exactly this type (or one that converts to it implicitly).
    Typed(DataType),
    /// Any type (a `Value` parameter; Flink's `InputGroup.ANY`).
    Any { nullable: bool },
    /// Any ROW type (a `Row` parameter without a hint).
    AnyRow { nullable: bool },
    /// A table (process table functions): its rows arrive one `eval` call at a time.
    Table(TableArg),
}

/// How a table argument is partitioned across virtual processors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Semantics {
    /// Each row on its own: no state, no timers; rows go to any processor.
    Row,
    /// Rows with equal PARTITION BY keys go to the same processor and share keyed state.
    Set,
}

/// A table argument of a process table function.
#[derive(Clone, Debug, PartialEq)]
pub struct TableArg {
    pub semantics: Semantics,
    /// The row type the function reads; `None` for a polymorphic `Row` parameter.
    pub row: Option<DataType>,
    /// A set-semantics table may be passed without PARTITION BY (one processor sees it all).
    pub optional_partition_by: bool,
    /// Every column of the table is copied into the output, ahead of the function's columns.
    pub pass_columns_through: bool,
    /// The call must name a time attribute with `on_time`.
    pub require_on_time: bool,
    /// The table may be a changelog: each row reaches `eval` with its kind
    /// (`Context::row_kind`); without it a changelog is a planning error.
    pub supports_updates: bool,
}

impl fmt::Display for TableArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TABLE")?;
        if let Some(row) = &self.row {
            write!(f, " {row}")?;
        }
        f.write_str(match self.semantics {
            Semantics::Row => " ROW SEMANTICS",
            Semantics::Set => " SET SEMANTICS",
        })?;
        for (flag, text) in [
            (self.optional_partition_by, " OPTIONAL PARTITION BY"),
            (self.pass_columns_through, " PASS COLUMNS THROUGH"),
            (self.require_on_time, " REQUIRE ON TIME"),
            (self.supports_updates, " SUPPORTS UPDATES"),
        ] {
            if flag {
                f.write_str(text)?;
            }
        }
        Ok(())
    }
}

/// The kind of a state entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StateKind {
    /// One value, read before and written after each call.
    Value,
    /// A `ListView`: entries accessed one at a time.
    List,
    /// A `MapView`: entries accessed by key.
    Map,
}

/// A state entry of a process table function.
#[derive(Clone, Debug, PartialEq)]
pub struct StateSpec {
    pub name: String,
    pub kind: StateKind,
    /// The Rust type, as declared.
    pub rust_type: String,
    /// The SQL type of a `Row` value state (from its hint).
    pub data_type: Option<DataType>,
    /// Entries not written for this long are gone.
    pub ttl: Option<std::time::Duration>,
}

impl fmt::Display for StateSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.name, self.rust_type)?;
        if let Some(data_type) = &self.data_type {
            write!(f, " {data_type}")?;
        }
        if let Some(ttl) = self.ttl {
            write!(f, " TTL {}", crate::types::format_duration(ttl))?;
        }
        Ok(())
    }
}

impl ArgType {
    pub fn nullable(&self) -> bool {
        match self {
            ArgType::Typed(t) => t.nullable,
            ArgType::Any { nullable } | ArgType::AnyRow { nullable } => *nullable,
            ArgType::Table(_) => false,
        }
    }
}

impl fmt::Display for ArgType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (name, nullable) = match self {
            ArgType::Typed(t) => return write!(f, "{t}"),
            ArgType::Any { nullable } => ("ANY", nullable),
            ArgType::AnyRow { nullable } => ("ROW", nullable),
            ArgType::Table(table) => return write!(f, "{table}"),
        };
        f.write_str(name)?;
        if !nullable {
            f.write_str(" NOT NULL")?;
        }
        Ok(())
    }
}

/// The result type of a signature.
#[derive(Clone, Debug, PartialEq)]
pub enum OutputType {
    Fixed(DataType),
    /// Decided per call by the function's `output_type` method (e.g. from a literal).
    Custom,
}

impl fmt::Display for OutputType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OutputType::Fixed(t) => write!(f, "{t}"),
            OutputType::Custom => f.write_str("<computed per call>"),
        }
    }
}
