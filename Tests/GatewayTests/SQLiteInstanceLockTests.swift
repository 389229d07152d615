import Foundation
import Gateway
import GatewaySQLite
import Testing

/// The SQLite single-instance lock is on the database file itself, and the descriptor it is taken on never drops
/// the POSIX locks SQLite holds through its own connections.
@Suite(
    "SQLite single-instance lock on the database file",
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs /usr/bin/python3"))
struct SQLiteInstanceLockTests {
    /// Whether another process can take a lock on the file at `path` now: an exclusive `flock` (`"flock"`), or a
    /// write lock on SQLite's shared-lock bytes (`"shared"`; it cannot while a connection of this process has the
    /// database open: in WAL mode each holds a read lock there).
    static func otherProcessCanLock(_ kind: String, _ path: String) throws -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [
            "-c",
            """
            import fcntl, os, sys
            fd = os.open(sys.argv[1], os.O_RDWR)
            try:
                if sys.argv[2] == "flock":
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                else:
                    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 510, 0x40000002)
                print("free")
            except OSError:
                print("held")
            """, path, kind,
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        process.waitUntilExit()
        let answer = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return answer.trimmingCharacters(in: .whitespacesAndNewlines) == "free"
    }

    /// Runs `body` with the path of a database file (not created) in a fresh directory, removed afterwards.
    static func withDatabasePath(_ body: (URL, String) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("orchard-lock-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try body(directory, directory.appendingPathComponent("gateway.db").path)
    }

    @Test("the lock is a flock on the file: another process sees it under another name, and not once it is released")
    func flockOnTheFile() throws {
        try Self.withDatabasePath { directory, path in
            // A first run: the file does not exist yet; the lock creates it, empty, and SQLite takes it as new.
            let lock = try SQLiteInstanceLock(databasePath: path)
            let store = try SQLiteStore(path: path, instanceLock: lock)
            let link = directory.appendingPathComponent("other-name.db").path
            try FileManager.default.linkItem(atPath: path, toPath: link)
            #expect(try !Self.otherProcessCanLock("flock", link))
            #expect(throws: SQLiteInstanceLockError.self) { _ = try SQLiteInstanceLock(databasePath: link) }
            store.releaseInstanceLock()
            #expect(try Self.otherProcessCanLock("flock", link))
            let again = try SQLiteInstanceLock(databasePath: link)
            #expect(try !Self.otherProcessCanLock("flock", path))
            again.release()
            #expect(try store.appliedMigrations().count >= 10)
        }
    }

    @Test("a store going away leaves the SQLite locks of another store on the same file in place")
    func closingOneStoreKeepsTheOthersLocks() throws {
        try Self.withDatabasePath { _, path in
            var serving: SQLiteStore? = try SQLiteStore(path: path, instanceLock: try SQLiteInstanceLock(databasePath: path))
            var reader: SQLiteStore? = try SQLiteStore(path: path)
            #expect(try reader?.read { try $0.merchants(environment: .sandbox) }.count == 0)
            #expect(try !Self.otherProcessCanLock("shared", path), "open connections hold their read lock")
            // The serving store, its connections and its lock go; the reader's connections keep their locks.
            serving = nil
            #expect(serving == nil)
            #expect(try !Self.otherProcessCanLock("shared", path), "the reader's locks survived the other store")
            #expect(try Self.otherProcessCanLock("flock", path))
            #expect(try reader?.read { try $0.merchants(environment: .sandbox) }.count == 0)
            reader = nil
            #expect(reader == nil)
            #expect(try Self.otherProcessCanLock("shared", path), "no connection is left")
        }
    }
}
