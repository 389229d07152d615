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
    /// Runs a Python snippet in another process with `path` as `sys.argv[1]`; returns what it printed.
    static func python(_ script: String, _ path: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script, path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        process.waitUntilExit()
        return String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Whether another process can `flock` the file exclusively now.
    static func otherProcessCanFlock(_ path: String) throws -> Bool {
        try python(
            """
            import fcntl, os, sys
            fd = os.open(sys.argv[1], os.O_RDONLY)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB); print("free")
            except OSError:
                print("held")
            """, path) == "free"
    }

    /// Whether another process can take a write lock on SQLite's shared-lock bytes of the file (it cannot while a
    /// connection of this process has the database open: in WAL mode each holds a read lock there).
    static func otherProcessCanLockSharedBytes(_ path: String) throws -> Bool {
        try python(
            """
            import fcntl, os, sys
            fd = os.open(sys.argv[1], os.O_RDWR)
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 510, 0x40000002); print("free")
            except OSError:
                print("held")
            """, path)
            == "free"
    }

    @Test("the lock is a flock on the file: another process sees it under another name, and not once it is released")
    func flockOnTheFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("orchard-lock-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("gateway.db").path
        // A first run: the file does not exist yet; the lock creates it, empty, and SQLite takes it as new.
        let lock = try SQLiteInstanceLock(databasePath: path)
        let store = try SQLiteStore(path: path, instanceLock: lock)
        let link = directory.appendingPathComponent("other-name.db").path
        try FileManager.default.linkItem(atPath: path, toPath: link)
        #expect(try !Self.otherProcessCanFlock(link))
        #expect(throws: SQLiteInstanceLockError.self) { _ = try SQLiteInstanceLock(databasePath: link) }
        store.releaseInstanceLock()
        #expect(try Self.otherProcessCanFlock(link))
        let again = try SQLiteInstanceLock(databasePath: link)
        #expect(try !Self.otherProcessCanFlock(path))
        again.release()
        #expect(try store.appliedMigrations().count >= 10)
    }

    @Test("a store going away leaves the SQLite locks of another store on the same file in place")
    func closingOneStoreKeepsTheOthersLocks() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("orchard-lock-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("gateway.db").path
        var serving: SQLiteStore? = try SQLiteStore(path: path, instanceLock: try SQLiteInstanceLock(databasePath: path))
        var reader: SQLiteStore? = try SQLiteStore(path: path)
        #expect(try reader?.read { try $0.merchants(environment: .sandbox) }.count == 0)
        #expect(try !Self.otherProcessCanLockSharedBytes(path), "open connections hold their read lock")
        // The serving store, its connections and its lock go; the reader's connections keep their locks.
        serving = nil
        #expect(serving == nil)
        #expect(try !Self.otherProcessCanLockSharedBytes(path), "the reader's locks survived the other store")
        #expect(try Self.otherProcessCanFlock(path))
        #expect(try reader?.read { try $0.merchants(environment: .sandbox) }.count == 0)
        reader = nil
        #expect(reader == nil)
        #expect(try Self.otherProcessCanLockSharedBytes(path), "no connection is left")
    }
}
