import CSQLite
import Foundation

/// A consistent copy of a SQLite gateway database made while the gateway serves and writes it, with SQLite's
/// online backup API: the pages are copied in one read transaction of the source (in WAL mode, readers never
/// block the writer), so the copy holds exactly the transactions committed when it began. The copy is written
/// beside the destination, checked (`PRAGMA integrity_check`), made durable (`fsync` of the file and its
/// directory) and only then renamed into place: a failed or interrupted backup leaves no partial file under the
/// destination's name.
public enum SQLiteBackup {
    /// What a backup copied.
    public struct Report: Sendable, Equatable {
        /// The database pages copied.
        public var pages: Int
        /// The copy's size in bytes.
        public var bytes: Int
    }

    /// An error of a backup: what failed, never a row's contents.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        /// What went wrong.
        public var reason: String
        public var description: String { reason }
    }

    /// Copies the database at `sourcePath` to `destinationPath`, which must not exist yet.
    public static func copy(from sourcePath: String, to destinationPath: String) throws -> Report {
        guard FileManager.default.fileExists(atPath: sourcePath) else {
            throw Failure(reason: "no database at \(sourcePath)")
        }
        guard !FileManager.default.fileExists(atPath: destinationPath) else {
            throw Failure(reason: "\(destinationPath) exists already; a backup never overwrites a file")
        }
        let temporary = destinationPath + ".partial-\(getpid())"
        defer {
            for suffix in ["", "-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: temporary + suffix) }
        }
        let pages: Int
        do {
            // The source is opened without SQLITE_OPEN_CREATE: a wrong path is an error, never a new empty file.
            let source = try SQLiteConnection(path: sourcePath, create: false)
            sqlite3_busy_timeout(source.handle, 10_000)
            let destination = try SQLiteConnection(path: temporary)
            guard let backup = sqlite3_backup_init(destination.handle, "main", source.handle, "main") else {
                throw destination.error(sqlite3_errcode(destination.handle))
            }
            var rc: Int32
            repeat {
                // -1: every page in one step, one read transaction of the source.
                rc = sqlite3_backup_step(backup, -1)
                if rc == SQLITE_BUSY || rc == SQLITE_LOCKED { usleep(20_000) }
            } while rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED
            pages = Int(sqlite3_backup_pagecount(backup))
            let finish = sqlite3_backup_finish(backup)
            guard rc == SQLITE_DONE, finish == SQLITE_OK else { throw destination.error(rc == SQLITE_DONE ? finish : rc) }
            let integrity = try destination.query("PRAGMA integrity_check") { $0.text(0) }
            guard integrity == ["ok"] else {
                throw Failure(reason: "the copy fails SQLite's integrity check: \(integrity.prefix(3).joined(separator: "; "))")
            }
            // One file: the copy's pages are all in it, with no write-ahead log beside it.
            try destination.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        } catch let error as SQLiteError {
            throw Failure(reason: "the backup of \(sourcePath) failed: \(error)")
        }
        try syncFile(temporary)
        guard rename(temporary, destinationPath) == 0 else {
            throw Failure(reason: "cannot move the copy to \(destinationPath): \(String(cString: strerror(errno)))")
        }
        try syncFile((destinationPath as NSString).deletingLastPathComponent.isEmpty
            ? "." : (destinationPath as NSString).deletingLastPathComponent)
        let bytes = (try? FileManager.default.attributesOfItem(atPath: destinationPath)[.size] as? Int) ?? 0
        return Report(pages: pages, bytes: bytes)
    }

    /// `fsync` of a file or directory.
    private static func syncFile(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw Failure(reason: "cannot open \(path) to sync it") }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw Failure(reason: "cannot sync \(path): \(String(cString: strerror(errno)))") }
    }
}
