//! Reading a file a user named, bounded: what every subcommand that reads
//! one (a scenario, a shard report, a regressions file) goes through, so no
//! path can hang the runner or exhaust its memory.
//!
//! Model: a path is looked at (`stat`, which never blocks) before it is
//! opened: only a regular file is read, so a FIFO (whose open waits for a
//! writer forever), a device (`/dev/zero` never ends), a socket or a
//! directory is refused by name. Its size is checked against the bound
//! before a byte is read, and the read itself stops one byte past the
//! bound, for a file that grows while it is read. Pinned by
//! `special_files_are_refused_before_they_are_read` (sims/tests/hostile_input.rs).

use std::io::Read as _;
use std::path::Path;

/// What kind of file `path` is, when it is not a regular one.
fn special(meta: &std::fs::Metadata) -> Option<&'static str> {
    let kind = meta.file_type();
    if kind.is_file() {
        return None;
    }
    if kind.is_dir() {
        return Some("a directory");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if kind.is_fifo() {
            return Some("a FIFO");
        }
        if kind.is_char_device() || kind.is_block_device() {
            return Some("a device");
        }
        if kind.is_socket() {
            return Some("a socket");
        }
    }
    Some("not a regular file")
}

/// Reads the regular file at `path` whole, if it holds at most `max` bytes;
/// `what` names what it should be, for the messages ("a scenario file").
///
/// # Errors
/// A message without the path: a missing or unreadable file, one that is
/// not a regular file, or one larger than `max`.
pub fn read_bounded(path: &Path, max: u64, what: &str) -> Result<Vec<u8>, String> {
    let meta = std::fs::metadata(path).map_err(|error| format!("cannot read: {error}"))?;
    if let Some(kind) = special(&meta) {
        return Err(format!("{kind}, not {what}: refused before reading"));
    }
    if meta.len() > max {
        return Err(format!(
            "{} bytes, larger than {max}: not {what}",
            meta.len()
        ));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(max + 1).read_to_end(&mut bytes))
        .map_err(|error| format!("cannot read: {error}"))?;
    if bytes.len() as u64 > max {
        return Err(format!("larger than {max} bytes: not {what}"));
    }
    Ok(bytes)
}

/// Whether `path` names something that is not a regular file (what a
/// directory scan skips or refuses without opening it).
#[must_use]
pub fn special_kind(path: &Path) -> Option<&'static str> {
    std::fs::metadata(path).ok().as_ref().and_then(special)
}
