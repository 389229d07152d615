import OrchardBase
import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Turns SIGTERM and SIGINT (or other signals) into a call of a shutdown closure, through Dispatch signal
/// sources: the signals' default action (terminating the process) is replaced while the handler is installed, and
/// restored by ``cancel()``.
///
/// The closure runs once, on a Dispatch queue, for the first signal received; typically it calls
/// ``HTTPServer/stop()`` and then lets the main thread exit. With `repeats`, it runs for every signal instead
/// (SIGHUP: reopen the log file).
// Unchecked: its dispatch sources and the saved C signal handlers are set in init and only read after.
public final class ShutdownSignalHandler: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]
    private let fired = Locked(false)
    private let previous: [(Int32, sighandler_t?)]

    /// Installs the handler for `signals`; `onSignal` receives the signal number, for the first signal only
    /// unless `repeats`.
    public init(
        signals: [Int32] = [SIGTERM, SIGINT], queue: DispatchQueue = DispatchQueue(label: "orchard.shutdown-signals"),
        repeats: Bool = false, onSignal: @escaping @Sendable (Int32) -> Void
    ) {
        let fired = self.fired
        var previous: [(Int32, sighandler_t?)] = []
        sources = signals.map { number in
            previous.append((number, signal(number, SIG_IGN)))
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                let first = fired.withLock { fired in
                    defer { fired = true }
                    return !fired
                }
                if first || repeats { onSignal(number) }
            }
            source.resume()
            return source
        }
        self.previous = previous
    }

    /// Removes the handler and restores the signals' previous dispositions (their default action, usually).
    public func cancel() {
        for source in sources { source.cancel() }
        for (number, handler) in previous { signal(number, handler ?? SIG_DFL) }
    }

    deinit { cancel() }
}

extension HTTPServer {
    /// Blocks the calling thread until one of `signals` arrives, then stops the server gracefully (see
    /// ``stop()``) and returns the signal number. `onSignal` runs first (e.g. to log the shutdown or stop a
    /// webhook dispatcher).
    public func runUntilShutdownSignal(
        signals: [Int32] = [SIGTERM, SIGINT], onSignal: @escaping @Sendable (Int32) -> Void = { _ in }
    ) -> Int32 {
        let received = Locked<Int32>(0)
        let done = DispatchSemaphore(value: 0)
        let handler = ShutdownSignalHandler(signals: signals) { number in
            received.withLock { $0 = number }
            onSignal(number)
            done.signal()
        }
        done.wait()
        stop()
        handler.cancel()
        return received.withLock { $0 }
    }
}
