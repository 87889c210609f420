//! The command lines of the scheduler and executor binaries: `--name value` pairs, each name
//! one the binary knows, given at most once.

use std::collections::BTreeMap;
use std::str::FromStr;

/// One option a binary takes: its name (without `--`), what it sets, and its default.
pub struct Flag {
    pub name: &'static str,
    pub help: &'static str,
    pub default: &'static str,
}

pub struct Flags {
    values: BTreeMap<&'static str, String>,
}

impl Flags {
    /// The options in `args` (the program name excluded); an error names the offending one.
    pub fn parse(args: impl IntoIterator<Item = String>, known: &[Flag]) -> Result<Flags, String> {
        let mut values = BTreeMap::new();
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let Some(name) = arg.strip_prefix("--") else {
                return Err(format!(
                    "unexpected argument `{arg}`: options are `--name value`"
                ));
            };
            let Some(flag) = known.iter().find(|flag| flag.name == name) else {
                return Err(format!("unknown option `{arg}`"));
            };
            let Some(value) = args.next() else {
                return Err(format!("`{arg}` needs a value"));
            };
            if values.insert(flag.name, value).is_some() {
                return Err(format!("`{arg}` is given twice"));
            }
        }
        for flag in known {
            values
                .entry(flag.name)
                .or_insert_with(|| flag.default.to_owned());
        }
        Ok(Flags { values })
    }

    pub fn text(&self, name: &str) -> String {
        self.values.get(name).cloned().unwrap_or_default()
    }

    pub fn number<T: FromStr>(&self, name: &str) -> Result<T, String> {
        let value = self.text(name);
        value
            .parse()
            .map_err(|_| format!("`--{name} {value}`: the value must be a number"))
    }
}

/// `usage: program [options]` and one line per option.
pub fn usage(program: &str, known: &[Flag]) -> String {
    let mut text = format!("usage: {program} [--option value]...\n");
    for flag in known {
        text.push_str(&format!(
            "  --{:<18} {} (default: {})\n",
            flag.name, flag.help, flag.default
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWN: &[Flag] = &[
        Flag {
            name: "bind-port",
            help: "port",
            default: "50050",
        },
        Flag {
            name: "bind-host",
            help: "host",
            default: "127.0.0.1",
        },
    ];

    fn parse(args: &[&str]) -> Result<Flags, String> {
        Flags::parse(args.iter().map(|a| a.to_string()), KNOWN)
    }

    #[test]
    fn given_values_replace_defaults_and_the_rest_keep_theirs() {
        let flags = parse(&["--bind-port", "7000"]).unwrap();
        assert_eq!(flags.number::<u16>("bind-port"), Ok(7000));
        assert_eq!(flags.text("bind-host"), "127.0.0.1");
    }

    #[test]
    fn each_mistake_is_named() {
        assert_eq!(
            parse(&["--port", "1"]).err().unwrap(),
            "unknown option `--port`"
        );
        assert_eq!(
            parse(&["--bind-port"]).err().unwrap(),
            "`--bind-port` needs a value"
        );
        assert_eq!(
            parse(&["--bind-port", "1", "--bind-port", "2"])
                .err()
                .unwrap(),
            "`--bind-port` is given twice"
        );
        assert_eq!(
            parse(&["7000"]).err().unwrap(),
            "unexpected argument `7000`: options are `--name value`"
        );
        let flags = parse(&["--bind-port", "many"]).unwrap();
        assert_eq!(
            flags.number::<u16>("bind-port").err().unwrap(),
            "`--bind-port many`: the value must be a number"
        );
    }
}
