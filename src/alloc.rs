//! The allocator: mimalloc (or the system's, without the `mimalloc`
//! feature), with a hook for when memory runs out, and ways to give freed
//! memory back to the system.  The crate root installs [`Allocator`] as
//! the global allocator.

use std::alloc::{GlobalAlloc, Layout};
use std::sync::OnceLock;

#[cfg(feature = "mimalloc")]
use mimalloc::MiMalloc as Inner;
#[cfg(not(feature = "mimalloc"))]
use std::alloc::System as Inner;

/// What to do when an allocation fails, instead of returning null
/// (after which Rust aborts with a message of its own).
static ON_FAILURE: OnceLock<fn(Layout)> = OnceLock::new();

/// Call `hook` when an allocation fails; it should end the process
/// (say, with `libc::_exit`) without allocating.  Set once: `toolspec
/// render`, under a memory limit, reports reaching it this way.
pub fn on_failure(hook: fn(Layout)) {
    let _ = ON_FAILURE.set(hook);
}

#[cold]
fn failed(layout: Layout) {
    if let Some(hook) = ON_FAILURE.get() {
        hook(layout);
    }
}

/// mimalloc 3's `mi_option_arena_eager_commit` (mimalloc.h).
#[cfg(all(feature = "mimalloc", target_os = "linux"))]
const ARENA_EAGER_COMMIT: std::os::raw::c_int = 4;

#[cfg(feature = "mimalloc")]
extern "C" {
    fn mi_collect(force: bool);
}

/// Give the memory freed so far back to the system, now rather than
/// after mimalloc's delay (a millisecond or two): called after freeing
/// a large document, before more is made, it lowers the peak.
pub fn release() {
    #[cfg(feature = "mimalloc")]
    // SAFETY: mimalloc's own collection of this thread's free memory.
    unsafe {
        mi_collect(true)
    }
}

/// Items made between two returns of the memory their making freed, in
/// [`releasing`]: without them, an import the size of GitHub's peaks
/// higher, for no time measured (`make bench`, `toolspec-bench-memory`).
const RELEASE_EVERY: usize = 256;

/// `each`, giving the memory freed so far back to the system
/// ([`release`]) every `RELEASE_EVERY` (256) items.  For the OpenAPI
/// import, whose reading makes and frees much on the way.  Each return
/// walks the whole heap, which costs more as the import grows: other
/// imports do without (a large catalog takes longer with: `make bench`,
/// `toolspec-bench-catalog`).
pub fn releasing<T, P>(each: &mut dyn FnMut(T, P)) -> impl FnMut(T, P) + '_ {
    let mut made = 0;
    move |item, path| {
        made += 1;
        if made % RELEASE_EVERY == 0 {
            release();
        }
        each(item, path)
    }
}

/// The bytes of the file at `path`.  The memory of a large file's
/// bytes is advised for transparent huge pages while the file is read
/// into it: faulted in 4 KiB at a time, a description the size of
/// GitHub's spends most of its read faulting (`make bench`,
/// `toolspec-bench-openapi`).  The advice is withdrawn once the file is
/// read, so that the memory, freed and reused for small allocations, is
/// faulted in small pages again (see `configure`).
pub fn read_file(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata().map_or(0, |m| usize::try_from(m.len()).unwrap_or(usize::MAX));
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(len).map_err(|e| std::io::Error::new(std::io::ErrorKind::OutOfMemory, e))?;
    let huge = advise_huge_pages(&mut bytes);
    let read = file.read_to_end(&mut bytes);
    if let Some(range) = huge {
        advise_range(range, false);
    }
    read.map(|_| bytes)
}

/// Files from this size are read into memory advised for huge pages.
const HUGE_FROM: usize = 4 << 20;

/// Advise the whole pages of `bytes`'s spare capacity for huge pages,
/// when that is at least [`HUGE_FROM`]; the range advised.
fn advise_huge_pages(bytes: &mut Vec<u8>) -> Option<(usize, usize)> {
    let spare = bytes.spare_capacity_mut();
    if spare.len() < HUGE_FROM || !cfg!(target_os = "linux") {
        return None;
    }
    let page = 4096;
    let start = (spare.as_ptr() as usize).div_ceil(page) * page;
    let end = (spare.as_ptr() as usize + spare.len()) / page * page;
    advise_range((start, end), true).then_some((start, end))
}

/// `madvise` the pages from `range.0` to `range.1` (page-aligned) for
/// transparent huge pages (`on`) or not; whether it was taken.  The
/// advice changes how pages will be faulted in, never the contents.
fn advise_range(range: (usize, usize), on: bool) -> bool {
    #[cfg(target_os = "linux")]
    {
        let advice = if on { libc::MADV_HUGEPAGE } else { libc::MADV_NOHUGEPAGE };
        // SAFETY: the range is whole pages of memory this process has
        // mapped (the allocation's capacity); this advice does not
        // change their contents.  A kernel without huge pages refuses
        // it, and the file is then read as it would be without.
        unsafe { libc::madvise(range.0 as *mut libc::c_void, range.1 - range.0, advice) == 0 }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (range, on);
        false
    }
}

#[cfg(all(feature = "mimalloc", target_os = "linux"))]
extern "C" {
    fn mi_option_set(option: std::os::raw::c_int, value: std::os::raw::c_long);
    #[cfg(test)]
    fn mi_option_get(option: std::os::raw::c_int) -> std::os::raw::c_long;
}

/// Have mimalloc commit its arenas' memory as it is used rather than
/// up front (unless `MIMALLOC_ARENA_EAGER_COMMIT` says otherwise).
/// Committed up front, an arena is marked for transparent huge pages,
/// and each page touched makes a huge page resident: importing GitHub's
/// description then peaks higher, for no time saved (`make bench`,
/// `toolspec-bench-memory`).  Run when the library is loaded, before
/// it allocates: mimalloc reserves its first arena on the first
/// allocation.
#[cfg(all(feature = "mimalloc", target_os = "linux"))]
extern "C" fn configure() {
    if std::env::var_os("MIMALLOC_ARENA_EAGER_COMMIT").is_none() {
        // SAFETY: sets one of mimalloc's options, which it reads when
        // it reserves an arena.
        unsafe { mi_option_set(ARENA_EAGER_COMMIT, 0) }
    }
}

#[cfg(all(feature = "mimalloc", target_os = "linux"))]
#[used]
#[link_section = ".init_array"]
static CONFIGURE: extern "C" fn() = configure;

#[cfg(all(test, feature = "mimalloc", target_os = "linux"))]
#[test]
fn arenas_are_committed_as_used() {
    let want = std::env::var("MIMALLOC_ARENA_EAGER_COMMIT").map_or(0, |v| v.parse().unwrap_or(0));
    // SAFETY: reads one of mimalloc's options.
    assert_eq!(unsafe { mi_option_get(ARENA_EAGER_COMMIT) }, want);
}

#[cfg(test)]
#[test]
fn files_are_read_whole_at_any_size() {
    let dir = std::env::temp_dir().join(format!("toolspec-read-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for len in [0, 1, 4095, HUGE_FROM - 1, HUGE_FROM, HUGE_FROM + 4097, 3 * HUGE_FROM + 12345] {
        let path = dir.join(format!("f{len}"));
        let want: Vec<u8> = (0..len).map(|i| (i * 7 + i / 4096) as u8).collect();
        std::fs::write(&path, &want).unwrap();
        let got = read_file(&path).unwrap();
        assert!(got == want, "a file of {len} bytes read as {} bytes, or other bytes", got.len());
    }
    assert_eq!(read_file(&dir.join("none")).unwrap_err().kind(), std::io::ErrorKind::NotFound);
    std::fs::remove_dir_all(&dir).unwrap();
}

pub struct Allocator;

// SAFETY: every call is passed on to the inner allocator unchanged.
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = Inner.alloc(layout);
        if p.is_null() {
            failed(layout);
        }
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = Inner.alloc_zeroed(layout);
        if p.is_null() {
            failed(layout);
        }
        p
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        Inner.dealloc(ptr, layout)
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = Inner.realloc(ptr, layout, new_size);
        if p.is_null() {
            // SAFETY: `realloc`'s contract makes this a valid layout.
            failed(Layout::from_size_align_unchecked(new_size, layout.align()));
        }
        p
    }
}
