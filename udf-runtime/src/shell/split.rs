//! Cutting typed or scripted text into statements: each ends with a `;` outside quotes and
//! comments, and a line starting with `\` (outside a statement) is a shell command of its own.

/// One piece of input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// A SQL statement, without its `;`, trimmed.
    Statement(String),
    /// A shell command: `\q`, `\?`, `\df name`.
    Command(String),
}

/// Input gathered until it ends a statement.
#[derive(Debug, Default)]
pub struct Splitter {
    pending: String,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Inside {
    Code,
    Quote(char),
    LineComment,
    BlockComment,
}

impl Splitter {
    /// Adds `line` (one line of input, without its line break) and returns the pieces it
    /// completes.
    pub fn push_line(&mut self, line: &str) -> Vec<Piece> {
        if self.pending.trim().is_empty() && line.trim_start().starts_with('\\') {
            self.pending.clear();
            return vec![Piece::Command(line.trim().to_owned())];
        }
        self.pending.push_str(line);
        self.pending.push('\n');
        let mut pieces = self.take_statements();
        // A command after the statements a line ended: `SELECT 1; \q`.
        let rest = self.pending.trim();
        if rest.starts_with('\\') && !rest.contains('\n') {
            pieces.push(Piece::Command(rest.to_owned()));
            self.pending.clear();
        }
        pieces
    }

    /// Whether a statement is begun and not yet ended.
    pub fn is_pending(&self) -> bool {
        !only_space_and_comments(&self.pending)
    }

    /// What is left at the end of input: a statement without its `;` counts as ended.
    pub fn finish(&mut self) -> Option<Piece> {
        let rest = std::mem::take(&mut self.pending);
        (!only_space_and_comments(&rest)).then(|| Piece::Statement(rest.trim().to_owned()))
    }

    /// Forgets a statement begun (Ctrl-C at a continuation prompt).
    pub fn clear(&mut self) {
        self.pending.clear();
    }

    fn take_statements(&mut self) -> Vec<Piece> {
        let mut pieces = Vec::new();
        let mut start = 0;
        let mut inside = Inside::Code;
        let text = std::mem::take(&mut self.pending);
        let mut chars = text.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            let next = chars.peek().map(|&(_, n)| n);
            inside = match (inside, c) {
                (Inside::Code, '\'' | '"' | '`') => Inside::Quote(c),
                (Inside::Code, '-') if next == Some('-') => Inside::LineComment,
                (Inside::Code, '/') if next == Some('*') => {
                    chars.next();
                    Inside::BlockComment
                }
                (Inside::Code, ';') => {
                    let statement = &text[start..at];
                    if !only_space_and_comments(statement) {
                        pieces.push(Piece::Statement(statement.trim().to_owned()));
                    }
                    start = at + 1;
                    Inside::Code
                }
                // A doubled quote inside quotes is the quote itself.
                (Inside::Quote(q), c) if c == q && next == Some(q) => {
                    chars.next();
                    inside
                }
                (Inside::Quote(q), c) if c == q => Inside::Code,
                (Inside::LineComment, '\n') => Inside::Code,
                (Inside::BlockComment, '*') if next == Some('/') => {
                    chars.next();
                    Inside::Code
                }
                (inside, _) => inside,
            };
        }
        self.pending = text[start..].to_owned();
        if only_space_and_comments(&self.pending) && !self.pending.contains("/*") {
            self.pending.clear();
        }
        pieces
    }
}

/// Whether `text` holds nothing but white space and complete `--` comments.
fn only_space_and_comments(text: &str) -> bool {
    text.lines().all(|line| {
        let line = line.trim();
        line.is_empty() || line.starts_with("--")
    })
}

/// Every piece of a whole script.
pub fn split_script(script: &str) -> Vec<Piece> {
    let mut splitter = Splitter::default();
    let mut pieces: Vec<Piece> = script
        .lines()
        .flat_map(|line| splitter.push_line(line))
        .collect();
    pieces.extend(splitter.finish());
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    fn statement(s: &str) -> Piece {
        Piece::Statement(s.to_owned())
    }

    #[test]
    fn statements_end_at_semicolons_outside_quotes_and_comments() {
        let script = "SELECT 'a;b', \"c;\" FROM t; -- a comment; not a statement\n\
                      SELECT 1 /* ; */\n  + 2;\n\
                      SELECT 'it''s;';";
        assert_eq!(
            split_script(script),
            vec![
                statement("SELECT 'a;b', \"c;\" FROM t"),
                // A comment after a statement's end belongs to no statement.
                statement("SELECT 1 /* ; */\n  + 2"),
                statement("SELECT 'it''s;'"),
            ]
        );
    }

    #[test]
    fn a_statement_spans_lines_until_its_semicolon() {
        let mut splitter = Splitter::default();
        assert!(splitter.push_line("SELECT").is_empty());
        assert!(splitter.is_pending());
        assert_eq!(
            splitter.push_line("  1;  SELECT 2"),
            vec![statement("SELECT\n  1")]
        );
        assert!(splitter.is_pending());
        assert_eq!(splitter.finish(), Some(statement("SELECT 2")));
        assert!(!splitter.is_pending());
    }

    #[test]
    fn commands_take_a_line_of_their_own_outside_statements() {
        let pieces = split_script("\\df counter\nSELECT\n\\q;\n\\q\nSELECT 1; \\df");
        assert_eq!(
            pieces,
            vec![
                Piece::Command("\\df counter".to_owned()),
                statement("SELECT\n\\q"),
                Piece::Command("\\q".to_owned()),
                statement("SELECT 1"),
                Piece::Command("\\df".to_owned()),
            ]
        );
    }

    #[test]
    fn only_comments_and_space_make_no_statement() {
        assert!(split_script("-- nothing\n\n  ;\n-- more").is_empty());
    }
}
