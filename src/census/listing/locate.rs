//! Where a JSON pointer's value is in the listing text, as line and column.

use super::*;

/// 1-based line and column of a byte offset.
pub(super) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.chars().rev().take_while(|&c| c != '\n').count() + 1;
    (line, column)
}

/// Byte offset of the value a JSON pointer names in `text` (already known to be valid JSON),
/// or of the deepest value on its path that exists. Each step borrows the value's raw text
/// from `text` (serde_json's `RawValue`), so its offset is where that text starts.
pub(super) fn locate(text: &str, pointer: &str) -> usize {
    let offset = |raw: &str| raw.as_ptr() as usize - text.as_ptr() as usize;
    let Ok(mut here) = serde_json::from_str::<&RawValue>(text) else {
        return text.len() - text.trim_start().len();
    };
    for token in pointer.split('/').skip(1) {
        let token = token.replace("~1", "/").replace("~0", "~");
        let raw = here.get();
        let next = match raw.as_bytes().first() {
            Some(b'{') => serde_json::from_str::<HashMap<String, &RawValue>>(raw)
                .ok()
                .and_then(|m| m.get(&token).copied()),
            Some(b'[') => serde_json::from_str::<Vec<&RawValue>>(raw)
                .ok()
                .zip(token.parse::<usize>().ok())
                .and_then(|(items, n)| items.get(n).copied()),
            _ => None,
        };
        match next {
            Some(v) => here = v,
            None => break,
        }
    }
    offset(here.get())
}
