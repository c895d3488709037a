//! Markdown escaping: text shown literally on one line (table cells included), for every
//! Markdown the tool writes (the report, the what-if section, the census site).

use std::fmt::Write as _;

/// Escapes text so Markdown shows it literally on one line (also inside table cells).
pub fn escape(s: &str) -> String {
    escape_inline(s).trim().to_string()
}

fn escape_inline(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for ch in s.chars() {
        if ch.is_whitespace() || ch.is_control() {
            if !space {
                out.push(' ');
            }
            space = true;
            continue;
        }
        space = false;
        if "\\`*_[]<>|~&".contains(ch) {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

/// Like [`escape`], but the message's balanced `code spans` stay code (outside tables only).
pub fn escape_message(s: &str) -> String {
    let parts: Vec<&str> = s.split('`').collect();
    if parts.len().is_multiple_of(2) {
        return escape(s);
    }
    let mut out = String::new();
    for (i, p) in parts.iter().enumerate() {
        if i % 2 == 0 || p.trim().is_empty() {
            out.push_str(&escape_inline(p));
        } else {
            let code: String = p
                .chars()
                .map(|c| {
                    if c.is_whitespace() || c.is_control() {
                        ' '
                    } else {
                        c
                    }
                })
                .collect();
            let _ = write!(out, "`{code}`");
        }
    }
    out.trim().to_string()
}
