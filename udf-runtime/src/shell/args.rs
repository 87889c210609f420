//! The shell's command line.

use std::path::PathBuf;

#[derive(Debug, Default, PartialEq, Eq)]
pub struct Args {
    /// `-c "SQL"`: run these statements and exit.
    pub command: Option<String>,
    /// `-f file.sql`: run the file's statements and exit.
    pub file: Option<PathBuf>,
    /// `--continue`: a failing statement does not stop a script (the exit code still tells).
    pub continue_on_error: bool,
    pub help: bool,
}

impl Args {
    pub const USAGE: &'static str = "\
usage: udf-sql [-c SQL | -f FILE] [--continue]
  -c, --command SQL   run the statements and exit
  -f, --file FILE     run the file's statements and exit
  --continue          go on after a failing statement (exit code 1 if any failed)
  -h, --help          this help
Without -c or -f the shell reads statements from the terminal.";

    /// The arguments after the program's name.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Self, String> {
        let mut parsed = Args::default();
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
            match arg.as_str() {
                "-c" | "--command" => parsed.command = Some(value(&arg)?),
                "-f" | "--file" => parsed.file = Some(value(&arg)?.into()),
                "--continue" => parsed.continue_on_error = true,
                "-h" | "--help" => parsed.help = true,
                other => return Err(format!("unknown argument `{other}`")),
            }
        }
        if parsed.command.is_some() && parsed.file.is_some() {
            return Err("-c and -f cannot be given together".to_owned());
        }
        Ok(parsed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Result<Args, String> {
        Args::parse(list.iter().map(|s| s.to_string()))
    }

    #[test]
    fn scripts_commands_and_mistakes() {
        assert_eq!(
            args(&["-c", "SELECT 1", "--continue"]).unwrap(),
            Args {
                command: Some("SELECT 1".into()),
                continue_on_error: true,
                ..Args::default()
            }
        );
        assert_eq!(args(&["-f", "a.sql"]).unwrap().file, Some("a.sql".into()));
        assert!(args(&["-c"]).unwrap_err().contains("-c needs a value"));
        assert!(args(&["-x"]).unwrap_err().contains("unknown argument `-x`"));
        assert!(args(&["-c", "x", "-f", "y"]).is_err());
    }
}
