//! Files of our row formats mapped into memory, kept across the queries of a table.
//!
//! A reader that skips what a query does not read (Arrow's unprojected columns) never
//! touches those pages of a mapping, and Skiff's strings become Arrow views into it without
//! a copy. Mapping a file and unmapping it again on every query cost the kernel about a
//! third of a Skiff scan (perf: page-table setup and teardown for every page), so a table
//! keeps its files' mappings: a file is mapped again only when its length or modification
//! time changed since. A mapped file must not be changed in place by another process while a
//! query reads it (a file truncated meanwhile can end the process with SIGBUS): the contract
//! of every memory-mapped reader (Arrow's, Polars').

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use datafusion::arrow::buffer::Buffer;

/// A file's mapping and what it was made from.
struct Mapping {
    len: u64,
    modified: Option<SystemTime>,
    bytes: Buffer,
}

/// The mappings of a table's files (see the module docs).
#[derive(Default)]
pub(crate) struct MappedFiles {
    mappings: Mutex<HashMap<PathBuf, Mapping>>,
}

impl std::fmt::Debug for MappedFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let count = self.mappings.lock().map(|m| m.len()).unwrap_or(0);
        write!(f, "MappedFiles({count} files)")
    }
}

impl MappedFiles {
    /// The bytes of `path`: its mapping, made now or kept from an earlier query of the same
    /// file (same length and modification time). `whole`: the reader walks every byte
    /// (Skiff), so a new mapping's pages are mapped in one go rather than one fault each.
    ///
    /// # Errors
    /// When the file cannot be opened, read for its metadata, or mapped.
    pub(crate) fn bytes(&self, path: &Path, whole: bool) -> Result<Buffer, String> {
        let file = File::open(path).map_err(|e| e.to_string())?;
        let metadata = file.metadata().map_err(|e| e.to_string())?;
        let (len, modified) = (metadata.len(), metadata.modified().ok());
        let mut mappings = self.mappings.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(mapping) = mappings.get(path) {
            if mapping.len == len && mapping.modified == modified && modified.is_some() {
                return Ok(mapping.bytes.clone());
            }
        }
        let bytes = map(&file, len, whole)?;
        mappings.insert(
            path.to_path_buf(),
            Mapping {
                len,
                modified,
                bytes: bytes.clone(),
            },
        );
        Ok(bytes)
    }
}

fn map(file: &File, len: u64, whole: bool) -> Result<Buffer, String> {
    if len == 0 {
        return Ok(Buffer::from_vec(Vec::<u8>::new()));
    }
    let mut options = memmap2::MmapOptions::new();
    if whole {
        options.populate();
    }
    // SAFETY: the file is opened read-only and not changed by this process while mapped
    // (the module docs state the contract for other processes).
    let map = unsafe { options.map(file) }.map_err(|e| e.to_string())?;
    let pointer = std::ptr::NonNull::new(map.as_ptr() as *mut u8).ok_or("a null mapping")?;
    let len = map.len();
    // SAFETY: `pointer` and `len` describe the mapping, which the Buffer keeps alive.
    Ok(unsafe { Buffer::from_custom_allocation(pointer, len, Arc::new(map)) })
}
