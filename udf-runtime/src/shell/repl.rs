//! The shell in a terminal: line editing and history (rustyline), a statement over several
//! lines until its `;`, Ctrl-C to drop a half-typed statement or stop a running query, Ctrl-D
//! or `\q` to leave. A failing statement prints its error and the prompt comes back.

use rustyline::DefaultEditor;
use rustyline::error::ReadlineError;

use super::console::Console;
use super::split::Splitter;
use super::{Next, Shell};

const PROMPT: &str = "udf-sql> ";
const MORE: &str = "      -> ";

/// Reads and runs statements until the user quits; whether the terminal could be used.
pub async fn run(shell: &mut Shell, console: &mut dyn Console) -> bool {
    // Before the editor: it keeps the SIGINT handler it finds (`interrupts.rs`).
    shell.interrupts = super::interrupts::listen();
    let mut editor = match DefaultEditor::new() {
        Ok(editor) => editor,
        Err(error) => {
            console.err(&format!("[ERROR] the terminal cannot be used: {error}\n"));
            return false;
        }
    };
    let history =
        std::env::var_os("HOME").map(|home| std::path::Path::new(&home).join(".udf_sql_history"));
    if let Some(history) = &history {
        let _ = editor.load_history(history);
    }
    console.out("udf-sql: your functions in SQL. \\? for help, \\q to quit.\n");
    let mut splitter = Splitter::default();
    loop {
        let prompt = if splitter.is_pending() { MORE } else { PROMPT };
        // Reading the terminal blocks: the runtime's other tasks go on meanwhile.
        let line = tokio::task::block_in_place(|| editor.readline(prompt));
        let line = match line {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => {
                splitter.clear();
                continue;
            }
            Err(ReadlineError::Eof) => break,
            Err(error) => {
                console.err(&format!("[ERROR] reading the terminal failed: {error}\n"));
                return false;
            }
        };
        if !line.trim().is_empty() {
            let _ = editor.add_history_entry(line.as_str());
        }
        for piece in splitter.push_line(&line) {
            if let Ok(Next::Quit) = shell.run_piece(piece, console).await {
                save(&mut editor, history.as_deref());
                return true;
            }
        }
    }
    save(&mut editor, history.as_deref());
    true
}

fn save(editor: &mut DefaultEditor, history: Option<&std::path::Path>) {
    if let Some(history) = history {
        let _ = editor.save_history(history);
    }
}
