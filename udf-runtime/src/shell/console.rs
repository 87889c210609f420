//! Where the shell writes: results and messages to standard output, errors to standard error
//! — or both into one transcript (tests, and programs that drive a shell).

use std::io::Write;

pub trait Console {
    /// Results and messages.
    fn out(&mut self, text: &str);
    /// Errors.
    fn err(&mut self, text: &str);
    /// A line that stays in place until the next one replaces it (progress); an empty one
    /// clears it. Only a terminal shows it.
    fn status(&mut self, _line: &str) {}
}

/// The process's standard output and error.
#[derive(Debug, Default)]
pub struct Terminal;

impl Console for Terminal {
    fn out(&mut self, text: &str) {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }

    fn err(&mut self, text: &str) {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(text.as_bytes());
        let _ = err.flush();
    }

    fn status(&mut self, line: &str) {
        // Back to the line's start and erase it, then the new text without a line break.
        self.err(&format!("\r\x1b[2K{line}"));
    }
}

/// Everything written, in order, in one string.
#[derive(Debug, Default)]
pub struct Transcript(pub String);

impl Console for Transcript {
    fn out(&mut self, text: &str) {
        self.0.push_str(text);
    }

    fn err(&mut self, text: &str) {
        self.0.push_str(text);
    }
}
