//! The standard `process_*` metrics (the names every Prometheus client library uses),
//! read from `/proc/self` at each scrape: a handful of small files, no allocation that
//! grows with the process. On a system without `/proc` none is written.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

/// One reading of the process.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reading {
    pub cpu_seconds: f64,
    pub resident_bytes: i64,
    pub virtual_bytes: i64,
    pub start_time_seconds: f64,
    pub open_fds: Option<i64>,
    pub max_fds: Option<i64>,
}

/// Reads `/proc/self/stat` (CPU time, start time), `/proc/self/status` (memory),
/// `/proc/self/fd` and `/proc/self/limits`; `None` where there is no `/proc`.
#[cfg(target_os = "linux")]
pub fn read() -> Option<Reading> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let boot = std::fs::read_to_string("/proc/stat").ok()?;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let mut reading = parse_stat(&stat, &boot, &status)?;
    reading.open_fds = std::fs::read_dir("/proc/self/fd").ok().map(|dir| dir.count() as i64);
    reading.max_fds = std::fs::read_to_string("/proc/self/limits").ok().and_then(|limits| parse_max_fds(&limits));
    Some(reading)
}

#[cfg(not(target_os = "linux"))]
pub fn read() -> Option<Reading> {
    None
}

/// The kernel's clock ticks of `/proc` (USER_HZ): 100 on every Linux ABI we build for,
/// as Prometheus' own procfs reader assumes.
const USER_HZ: f64 = 100.0;

/// `/proc/self/stat`'s CPU time (utime + stime, fields 14 and 15) and start time (22, in
/// ticks after boot, with `/proc/stat`'s `btime`); `/proc/self/status`' `VmRSS` and
/// `VmSize` (kB).
pub fn parse_stat(stat: &str, proc_stat: &str, status: &str) -> Option<Reading> {
    // The command name (field 2) is in parentheses and may hold spaces or parentheses.
    let fields: Vec<&str> = stat.get(stat.rfind(')')? + 1..)?.split_whitespace().collect();
    // fields[0] is field 3 (the state).
    let field = |n: usize| fields.get(n - 3).and_then(|text| text.parse::<u64>().ok());
    let boot_seconds: u64 =
        proc_stat.lines().find_map(|line| line.strip_prefix("btime ")).and_then(|text| text.trim().parse().ok())?;
    let kilobytes = |key: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(key))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse::<i64>().ok())
    };
    Some(Reading {
        cpu_seconds: (field(14)? + field(15)?) as f64 / USER_HZ,
        start_time_seconds: boot_seconds as f64 + field(22)? as f64 / USER_HZ,
        virtual_bytes: kilobytes("VmSize:")? * 1024,
        resident_bytes: kilobytes("VmRSS:")? * 1024,
        open_fds: None,
        max_fds: None,
    })
}

/// The soft limit of `Max open files` in `/proc/self/limits` (`None` when unlimited).
pub fn parse_max_fds(limits: &str) -> Option<i64> {
    let rest = limits.lines().find_map(|line| line.strip_prefix("Max open files"))?;
    rest.split_whitespace().next()?.parse().ok()
}

/// The collector of the registry's root (no `sightline_` prefix).
#[derive(Debug)]
pub struct ProcessCollector;

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let Some(reading) = read() else { return Ok(()) };
        let cpu = ConstCounter::new(reading.cpu_seconds);
        cpu.encode(encoder.encode_descriptor(
            "process_cpu_seconds",
            "Total user and system CPU time spent in seconds.",
            None,
            cpu.metric_type(),
        )?)?;
        let gauges = [
            ("process_resident_memory_bytes", "Resident memory size in bytes.", Some(reading.resident_bytes as f64)),
            ("process_virtual_memory_bytes", "Virtual memory size in bytes.", Some(reading.virtual_bytes as f64)),
            (
                "process_start_time_seconds",
                "Start time of the process since unix epoch in seconds.",
                Some(reading.start_time_seconds),
            ),
            ("process_open_fds", "Number of open file descriptors.", reading.open_fds.map(|n| n as f64)),
            ("process_max_fds", "Maximum number of open file descriptors.", reading.max_fds.map(|n| n as f64)),
        ];
        for (name, help, value) in gauges {
            if let Some(value) = value {
                let gauge = ConstGauge::new(value);
                gauge.encode(encoder.encode_descriptor(name, help, None, gauge.metric_type())?)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_read_past_a_command_name_with_spaces_and_parentheses() {
        // Fields 3..=24 of a real line, behind a hostile command name.
        let stat = "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 50 0 0 20 0 9 0 12000 104857600 2560 \
                    18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
        let proc_stat = "cpu  1 2 3\nbtime 1700000000\nprocesses 9\n";
        let status = "Name:\tsightline\nVmPeak:\t  110000 kB\nVmSize:\t  102400 kB\nVmRSS:\t   10240 kB\n";
        let reading = parse_stat(stat, proc_stat, status).unwrap();
        assert_eq!(reading.cpu_seconds, 3.0);
        assert_eq!(reading.start_time_seconds, 1_700_000_120.0);
        assert_eq!(reading.virtual_bytes, 104_857_600);
        assert_eq!(reading.resident_bytes, 10_485_760);
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max processes             95000                95000                processes\n\
                      Max open files            1024                 524288               files\n";
        assert_eq!(parse_max_fds(limits), Some(1024));
        assert_eq!(parse_max_fds("Max open files            unlimited            unlimited            files\n"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_reads() {
        let reading = read().unwrap();
        assert!(reading.resident_bytes > 0 && reading.virtual_bytes >= reading.resident_bytes);
        assert!(reading.open_fds.unwrap() > 0 && reading.max_fds.unwrap() >= reading.open_fds.unwrap());
        assert!(reading.start_time_seconds > 1_600_000_000.0);
    }
}
