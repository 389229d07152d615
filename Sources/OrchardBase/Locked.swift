import Foundation

/// The package's one lock box: a value that is read and changed only inside ``withLock(_:)``.
///
/// As swift-certificates' `LockedValueBox`, it is `Sendable` only where `Value` is: a box does not make a
/// non-sendable value safe to share. On `NSLock`, so that it also builds for the platforms the package declares
/// (iOS 15, macOS 14, before `Mutex`).
package final class Locked<Value> {
    private let lock = NSLock()
    private var value: Value

    /// A box holding `value`.
    package init(_ value: Value) { self.value = value }

    /// Runs `body` with the value, holding the lock; `body` must not call back into this box.
    package func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// A copy of the value (taken under the lock).
    package var current: Value { withLock { $0 } }
}

extension Locked where Value == Void {
    /// A plain lock: runs `body` holding it.
    package convenience init() { self.init(()) }

    /// Runs `body` holding the lock.
    package func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        try withLock { (_: inout Void) throws(Failure) in try body() }
    }
}

// The value is only reached under `lock`, so sharing the box is as safe as sharing the value.
extension Locked: @unchecked Sendable where Value: Sendable {}
