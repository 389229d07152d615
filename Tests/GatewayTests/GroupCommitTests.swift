import Foundation
import Gateway
import GatewaySQLite
import Testing

/// The SQLite store's batching writer: concurrent writes share one transaction and one `fdatasync`, each body in
/// its own savepoint; a failing body rolls back only itself; reads never wait behind the writer.
@Suite("Group commit")
struct GroupCommitTests {
    struct Refused: Error {}

    static func store() throws -> (SQLiteStore, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("orchard-gc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return (try SQLiteStore(path: directory.appendingPathComponent("g.db").path), directory)
    }

    /// Runs `body` on a thread of its own (so many can block at once), inside `group`.
    static func thread(_ group: DispatchGroup, _ body: @escaping @Sendable () -> Void) {
        group.enter()
        Thread {
            body()
            group.leave()
        }.start()
    }

    /// Waits (bounded) until `condition` holds.
    static func eventually(_ condition: () -> Bool) -> Bool {
        for _ in 0..<2_000 {
            if condition() { return true }
            usleep(1_000)
        }
        return condition()
    }

    @Test("writes queued behind a running batch commit together; a failing one rolls back alone")
    func batchWithFailure() throws {
        let (store, directory) = try Self.store()
        defer { try? FileManager.default.removeItem(at: directory) }
        let start = store.commitCounts
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        let results = LockedResults()
        // The first write holds its batch open until the others are queued behind it.
        Self.thread(group) {
            let r = Result {
                try store.write { tx in
                    try tx.setSetting("first", value: Data("1".utf8))
                    entered.signal()
                    release.wait()
                }
            }
            results.set("first", r.map { _ in "ok" })
        }
        entered.wait()
        let names = (0..<12).map { "w\($0)" }
        for name in names {
            Self.thread(group) {
                let r = Result { () throws -> String in
                    try store.write { tx in
                        try tx.setSetting(name, value: Data(name.utf8))
                        if name == "w5" { throw Refused() }
                        return name
                    }
                }
                results.set(name, r)
            }
        }
        #expect(Self.eventually { store.queuedWriteCount == names.count })
        // A read is answered while the batch is open (from the last committed state).
        #expect(try store.read { try $0.setting("first") } == nil)
        release.signal()
        group.wait()
        let end = store.commitCounts
        #expect(end.transactions - start.transactions == names.count)  // 1 + 12 − the refused one
        #expect(end.batches - start.batches == 2)
        #expect(try results.get("first") == "ok")
        for name in names where name != "w5" { #expect(try results.get(name) == name) }
        #expect(throws: Refused.self) { try results.get("w5") }
        for name in names {
            let stored = try store.read { try $0.setting(name) }
            #expect(stored == (name == "w5" ? nil : Data(name.utf8)))
        }
    }

    @Test("a write started inside a write body runs in a nested savepoint of the same transaction")
    func nestedWrite() throws {
        let (store, directory) = try Self.store()
        defer { try? FileManager.default.removeItem(at: directory) }
        let start = store.commitCounts
        try store.write { tx in
            try tx.setSetting("outer", value: Data("o".utf8))
            try store.write { try $0.setSetting("inner", value: Data("i".utf8)) }
            #expect(throws: Refused.self) {
                try store.write { inner in
                    try inner.setSetting("rolled-back", value: Data("x".utf8))
                    throw Refused()
                }
            }
        }
        #expect(try store.read { try $0.setting("outer") } == Data("o".utf8))
        #expect(try store.read { try $0.setting("inner") } == Data("i".utf8))
        #expect(try store.read { try $0.setting("rolled-back") } == nil)
        #expect(store.commitCounts.transactions - start.transactions == 1)
        #expect(store.commitCounts.batches - start.batches == 1)
    }

    @Test("many concurrent writers: every write lands once, in fewer fsyncs than writes")
    func concurrentWriters() throws {
        let (store, directory) = try Self.store()
        defer { try? FileManager.default.removeItem(at: directory) }
        let start = store.commitCounts
        let count = 400
        let group = DispatchGroup()
        for worker in 0..<16 {
            Self.thread(group) {
                for i in stride(from: worker, to: count, by: 16) {
                    try? store.write { try $0.setSetting("k\(i)", value: Data("\(i)".utf8)) }
                }
            }
        }
        group.wait()
        let end = store.commitCounts
        #expect(end.transactions - start.transactions == count)
        #expect(end.batches - start.batches <= count)
        for i in 0..<count { #expect(try store.read { try $0.setting("k\(i)") } == Data("\(i)".utf8)) }
    }
}

/// Results of concurrent writes by name.
final class LockedResults: @unchecked Sendable {
    private let lock = NSLock()
    private var results: [String: Result<String, any Error>] = [:]
    func set(_ name: String, _ result: Result<String, any Error>) { lock.withLock { results[name] = result } }
    func get(_ name: String) throws -> String {
        guard let result = lock.withLock({ results[name] }) else { throw GroupCommitTests.Refused() }
        return try result.get()
    }
}
