//! A server process's CPU time, read from outside it through /proc (Linux), so every server
//! (ours and the peers) is measured the same way.

use std::io;

/// CPU time (user + system) of every thread of process `pid`, in nanoseconds: the sum of the
/// threads' `schedstat` run times (nanosecond resolution), or where the kernel has no
/// schedstat, `utime + stime` of `/proc/<pid>/stat` (clock ticks, 100 per second). A thread
/// that ends takes its time out of the sum: for servers whose threads outlive the measured run
/// (tokio's workers, Thrift's pool), read while the process is idle (a running thread's
/// schedstat lags by up to a tick).
///
/// # Errors
/// The I/O error when the process is gone or /proc is not there.
pub fn process_cpu_ns(pid: u32) -> io::Result<u64> {
    match schedstat_ns(pid) {
        Ok(ns) => Ok(ns),
        Err(_) => stat_ns(pid),
    }
}

/// CPU time of the calling thread so far, in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`, which
/// counts the running slice too; a running thread's `schedstat` lags by up to a tick).
///
/// # Errors
/// The OS error when the clock cannot be read.
pub fn thread_cpu_ns() -> io::Result<u64> {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid, writable timespec for the call's duration.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64)
}

fn schedstat_ns(pid: u32) -> io::Result<u64> {
    let mut total = 0u64;
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        let path = task?.path().join("schedstat");
        // A thread that ended between the listing and the read holds no time any more.
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        total += first_number(&text)?;
    }
    Ok(total)
}

fn stat_ns(pid: u32) -> io::Result<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // Fields after the command name (which may hold spaces) start at state, field 3.
    let after_name = text.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks = |i: usize| -> io::Result<u64> {
        fields
            .get(i)
            .and_then(|f| f.parse().ok())
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "unreadable /proc stat"))
    };
    // utime and stime are fields 14 and 15, i.e. 11 and 12 after the state field.
    Ok((ticks(11)? + ticks(12)?) * 10_000_000)
}

fn first_number(text: &str) -> io::Result<u64> {
    text.split_whitespace()
        .next()
        .and_then(|f| f.parse().ok())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "unreadable schedstat"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_process_cpu_time_grows() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap();
        let pid = child.id();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let before = process_cpu_ns(pid).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(150));
        let after = process_cpu_ns(pid).unwrap();
        let ticks = stat_ns(pid).unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(after > before, "{before} -> {after}");
        assert!(ticks > 0);
    }

    #[test]
    fn the_thread_clock_counts_this_thread_only_while_it_runs() {
        let before = thread_cpu_ns().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(30));
        let slept = thread_cpu_ns().unwrap() - before;
        let started = std::time::Instant::now();
        let mut x = 0u64;
        while started.elapsed().as_millis() < 30 {
            x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1));
        }
        let worked = thread_cpu_ns().unwrap() - before - slept;
        assert!(slept < 5_000_000, "sleeping took {slept} ns of CPU");
        assert!(worked > slept, "worked {worked} ns, slept {slept} ns");
    }
}
