import Foundation
import OrchardBase

/// CPU time, memory and load of this process, as the benchmarks report them (Linux `/proc`).
enum ProcessUsage {
    /// CPU seconds (user + system) the process used so far.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// CPU seconds (user + system) that processes `pids` used so far, from `/proc/<pid>/stat`; nil when there are
    /// none or one cannot be read (gone, or not Linux).
    static func cpuSeconds(processes pids: [Int32]) -> Double? {
        guard !pids.isEmpty else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        var total = 0.0
        for pid in pids {
            // The fields after the command's closing parenthesis start at the third (state); utime and stime
            // are the 14th and 15th.
            guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = text.lastIndex(of: ")")
            else { return nil }
            let fields = text[text.index(after: close)...].split(separator: " ")
            guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
            total += (user + system) / ticks
        }
        return total
    }

    /// CPU seconds the calling thread used so far.
    static func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// The resident set size now, bytes (`VmRSS` of `/proc/self/status`), 0 when unknown.
    static func residentBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let digits = line.dropFirst(6).trimmingCharacters(in: .whitespaces).split(separator: " ").first
            return (digits.flatMap { Int($0) } ?? 0) * 1024
        }
        return 0
    }

    /// The 1, 5 and 15 minute load averages (`/proc/loadavg`), or "unknown".
    static func loadAverage() -> String {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "unknown" }
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    private static func seconds(_ value: timeval) -> Double { Double(value.tv_sec) + Double(value.tv_usec) / 1e6 }
}

/// Samples the resident set size every 50 ms on a thread of its own until stopped; keeps the highest.
final class RSSSampler: Sendable {
    private let peak = Locked(0)
    private let running = Locked(true)
    private let finished = DispatchSemaphore(value: 0)

    init() {
        peak.withLock { $0 = ProcessUsage.residentBytes() }
        Thread { [self] in
            while running.current {
                let now = ProcessUsage.residentBytes()
                peak.withLock { $0 = max($0, now) }
                usleep(50_000)
            }
            finished.signal()
        }.start()
    }

    /// Stops sampling and returns the highest resident set size seen, bytes.
    func stop() -> Int {
        running.withLock { $0 = false }
        finished.wait()
        return max(peak.current, ProcessUsage.residentBytes())
    }
}

extension String {
    /// The string right-aligned in `width` columns.
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
