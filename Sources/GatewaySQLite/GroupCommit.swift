import CSQLite
import Foundation
import OrchardBase

/// Group commit on one SQLite writer connection. Callers queue their write bodies; one of them (the leader)
/// takes the queue, opens one `BEGIN IMMEDIATE` transaction, runs each body in its own `SAVEPOINT` (a body
/// that throws is rolled back to it, alone), commits once, and wakes every caller of the batch. While a batch
/// commits, the next callers queue up and form the next batch, so one `fdatasync` serves them all.
///
/// A caller returns only after the `COMMIT` holding its body succeeded (durable under `synchronous=FULL`); a
/// failed `COMMIT` fails every body of the batch (nothing of it was written). A write started from inside a
/// body (same thread) runs inline in a nested savepoint. The transaction-control statements are prepared once,
/// in the connection's statement cache.
// Unchecked: the queued requests (not Sendable) are handed between threads under `state`, and each is read by its caller only once woken.
final class GroupCommit: @unchecked Sendable {
    /// What a write did: its value, whether its savepoint changed rows, and whether it was the one to report
    /// its batch's commit (so each batch is counted once).
    struct Outcome<T> {
        var value: T
        var changed: Bool
        var batchChanged: Bool
    }

    /// One queued write.
    private final class Request {
        /// The caller's body; dropped once run, before the caller is woken (it must not outlive the call).
        var body: ((SQLiteConnection) throws -> Any)?
        var result: Result<Any, any Error>?
        var changed = false
        var reportsBatch = false
        /// Its batch committed (or failed): `result` is final.
        var done = false
        /// Wakes the caller when `done` is set, or to lead the next batch.
        let wake = DispatchSemaphore(value: 0)
        init(_ body: @escaping (SQLiteConnection) throws -> Any) { self.body = body }
    }

    private let connection: SQLiteConnection
    private let maximumBatch: Int
    private struct State {
        /// Writes waiting for a batch, oldest first.
        var queue: [Request] = []
        /// Whether a batch is running or handed to its next leader.
        var leading = false
        /// The thread running a batch now, if any: writes from it are nested.
        var leader: pthread_t?
    }
    private let state = Locked(State())
    /// What a write does once queued: run inside the current batch, wait for its batch, or lead one.
    private enum Turn { case nested, wait, lead }

    /// Called on the leader's thread right after a batch that changed rows committed, before any of its
    /// callers is woken (crash tests kill the process there: committed, not yet answered).
    var afterCommit: (@Sendable () -> Void)?

    /// Writes queued and not yet taken into a batch.
    var queuedCount: Int { state.withLock { $0.queue.count } }

    init(connection: SQLiteConnection, maximumBatch: Int) {
        self.connection = connection
        self.maximumBatch = maximumBatch
    }

    /// Runs `body` as one write of a batch and returns once the batch is durable.
    func run<T>(_ body: (SQLiteConnection) throws -> T) throws -> Outcome<T> {
        try withoutActuallyEscaping(body) { body in
            let request = Request { try body($0) }
            let turn = state.withLock { state -> Turn in
                if let leader = state.leader, pthread_equal(leader, pthread_self()) != 0 { return .nested }
                state.queue.append(request)
                if state.leading { return .wait }
                state.leading = true
                return .lead
            }
            switch turn {
            case .nested: return try nested(request)
            case .wait:
                // Woken once its batch is done, or to lead the next batch (it is first in the queue then).
                request.wake.wait()
                if !request.done { lead(from: request) }
            case .lead: lead(from: request)
            }
            // The request is done: the closure is no longer referenced by the queue.
            let value = try request.result!.get() as! T
            return Outcome(value: value, changed: request.changed, batchChanged: request.reportsBatch)
        }
    }

    /// Takes up to `maximumBatch` queued writes (`request`, first in the queue, among them), commits them as
    /// one transaction, wakes their callers and hands leadership to the oldest write still queued.
    private func lead(from request: Request) {
        let batch = state.withLock { state -> [Request] in
            state.leader = pthread_self()
            let batch = Array(state.queue.prefix(maximumBatch))
            state.queue.removeFirst(batch.count)
            return batch
        }
        commit(batch)
        let next = state.withLock { state -> Request? in
            for member in batch {
                member.body = nil
                member.done = true
            }
            state.leader = nil
            let next = state.queue.first
            if next == nil { state.leading = false }
            return next
        }
        // The next leader first: its batch starts while this one's callers wake.
        next?.wake.signal()
        for member in batch where member !== request { member.wake.signal() }
    }

    private func commit(_ batch: [Request]) {
        let db = connection
        do {
            try db.run("BEGIN IMMEDIATE")
        } catch {
            for request in batch { request.result = .failure(error) }
            return
        }
        var anyChange = false
        for request in batch {
            if sqlite3_get_autocommit(db.handle) != 0 {
                // An earlier statement ended the transaction (SQLite rolls back on some errors, e.g. a full
                // disk): open a new one for the rest; the bodies before it already failed with that error.
                do { try db.run("BEGIN IMMEDIATE") } catch {
                    request.result = .failure(error)
                    continue
                }
            }
            let before = sqlite3_total_changes64(db.handle)
            do {
                try db.run("SAVEPOINT write")
                request.result = .success(try request.body!(db))
                try db.run("RELEASE write")
                request.changed = sqlite3_total_changes64(db.handle) != before
                anyChange = anyChange || request.changed
            } catch {
                request.result = .failure(error)
                if sqlite3_get_autocommit(db.handle) == 0 {
                    _ = try? db.run("ROLLBACK TO write")
                    _ = try? db.run("RELEASE write")
                } else {
                    // The whole transaction is gone: so are the earlier bodies' changes.
                    failEarlier(batch, before: request, with: error)
                    anyChange = false
                }
            }
        }
        guard sqlite3_get_autocommit(db.handle) == 0 else { return }
        do {
            try db.run("COMMIT")
        } catch {
            _ = try? db.run("ROLLBACK")
            for request in batch {
                if case .success = request.result { request.result = .failure(error) }
                request.changed = false
            }
            return
        }
        if anyChange, let first = batch.first(where: { $0.changed }) {
            first.reportsBatch = true
            afterCommit?()
        }
    }

    /// Fails the successful bodies queued before `request` (their transaction was rolled back).
    private func failEarlier(_ batch: [Request], before request: Request, with error: any Error) {
        for earlier in batch {
            if earlier === request { break }
            if case .success = earlier.result {
                earlier.result = .failure(error)
                earlier.changed = false
            }
        }
    }

    /// A write started inside a body of the running batch: a nested savepoint of the same transaction.
    private func nested<T>(_ request: Request) throws -> Outcome<T> {
        let db = connection
        defer { request.body = nil }
        try db.run("SAVEPOINT nested")
        do {
            let value = try request.body!(db) as! T
            try db.run("RELEASE nested")
            return Outcome(value: value, changed: false, batchChanged: false)
        } catch {
            if sqlite3_get_autocommit(db.handle) == 0 {
                _ = try? db.run("ROLLBACK TO nested")
                _ = try? db.run("RELEASE nested")
            }
            throw error
        }
    }
}
