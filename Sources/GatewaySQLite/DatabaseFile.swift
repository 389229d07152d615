import CSQLite
import Foundation
import OrchardBase

/// A database file as the process has it open besides SQLite: one descriptor per file (by device and inode, so
/// every path that names the file — a hard link, a symlink, a `..` spelling, a bind mount — finds the same one),
/// shared by every connection of the process to that file.
///
/// SQLite locks the file with POSIX `fcntl` locks, which belong to the process and the file: closing *any*
/// descriptor of the file drops all of them, also those of connections still open. So this descriptor is closed
/// only when the last connection of the process to the file has closed (each ``SQLiteConnection`` holds its file
/// until it is gone), and the ``SQLiteInstanceLock`` takes its `flock` on it.
final class DatabaseFile: Sendable {
    /// The file's identity: the device and inode `fstat` reports.
    struct Identity: Hashable, Sendable {
        var device: UInt64
        var inode: UInt64
    }

    let identity: Identity
    /// The descriptor (read-write when permitted, else read-only), open while the file has a holder.
    let descriptor: Int32

    /// The open files by identity, with how many holders each has (connections and instance locks) and any
    /// further descriptor of the same file a race left open (closed with the last holder). Opening and closing
    /// happen under this lock, so a descriptor is never closed while a connection of the process has the file.
    private static let open = Locked<[Identity: (file: DatabaseFile, users: Int, extra: [Int32])]>([:])
    /// Which files a store of this process holds the instance lock of (`flock` alone cannot tell: the
    /// descriptor is shared, and a second `flock` on it succeeds).
    private static let exclusive = Locked<Set<Identity>>([])

    private init(identity: Identity, descriptor: Int32) {
        self.identity = identity
        self.descriptor = descriptor
    }

    private static func identity(_ info: stat) -> Identity {
        Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// The file at `path` (created empty when it does not exist yet and `create`, as SQLite would create it), held until
    /// ``release()``. A file the process already has is not opened again: closing a second descriptor would
    /// drop the locks of its connections.
    static func retain(path: String, create: Bool = true) throws -> DatabaseFile {
        try open.withLock { table in
            var info = stat()
            if stat(path, &info) == 0, let known = table[identity(info)] {
                table[known.file.identity] = (known.file, known.users + 1, known.extra)
                return known.file
            }
            var descriptor = Glibc.open(path, O_RDWR | (create ? O_CREAT : 0) | O_CLOEXEC, 0o644)
            if descriptor < 0, errno == EACCES || errno == EROFS { descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC) }
            guard descriptor >= 0 else {
                throw SQLiteError(code: SQLITE_CANTOPEN, message: "cannot open \(path): \(String(cString: strerror(errno)))")
            }
            guard fstat(descriptor, &info) == 0 else {
                let message = String(cString: strerror(errno))
                close(descriptor)
                throw SQLiteError(code: SQLITE_CANTOPEN, message: "cannot read \(path): \(message)")
            }
            if let known = table[identity(info)] {
                // The path named another file a moment ago: this descriptor of a file the process has open is
                // kept until the file's last holder goes, for the same reason.
                table[known.file.identity] = (known.file, known.users + 1, known.extra + [descriptor])
                return known.file
            }
            let file = DatabaseFile(identity: identity(info), descriptor: descriptor)
            table[file.identity] = (file, 1, [])
            return file
        }
    }

    /// Gives the file back; the last holder closes the descriptor.
    func release() {
        Self.open.withLock { table in
            guard let entry = table[identity] else { return }
            if entry.users > 1 {
                table[identity] = (entry.file, entry.users - 1, entry.extra)
            } else {
                table[identity] = nil
                for descriptor in entry.extra + [descriptor] { close(descriptor) }
            }
        }
    }

    /// Takes the exclusive instance lock on the file: false when a store of this process or another process
    /// holds it.
    func lockExclusively() -> Bool {
        Self.exclusive.withLock { held in
            guard !held.contains(identity), flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { return false }
            held.insert(identity)
            return true
        }
    }

    /// Gives the instance lock up (SQLite's own locks stay: `flock` and `fcntl` locks are apart).
    func unlockExclusively() {
        Self.exclusive.withLock { held in
            guard held.remove(identity) != nil else { return }
            flock(descriptor, LOCK_UN)
        }
    }
}

/// The single-instance lock of a SQLite database: an exclusive `flock` on the database file itself (its device and
/// inode, whatever path names it), held by the one `orchard serve` on the file. A second holder, in this process or
/// another, is refused with ``SQLiteInstanceLockError``. The store it is given to
/// (``SQLiteStore/init(path:busyTimeoutMilliseconds:instanceLock:)``) holds it for its lifetime; the kernel drops it
/// when the process dies. Like SQLite itself, it needs a local file system (not NFS).
public final class SQLiteInstanceLock: Sendable {
    /// The path the lock was taken through.
    public let path: String
    private let file: DatabaseFile
    private let held = Locked(true)

    /// Takes the lock on the database file at `path`, creating the file (empty, as SQLite does) when it does
    /// not exist yet; its directory must exist.
    public init(databasePath path: String) throws {
        // Refused before any property is set, so the refusal never runs `deinit` (which would give up the lock
        // this process's holder has).
        let file = try DatabaseFile.retain(path: path)
        guard file.lockExclusively() else {
            file.release()
            throw SQLiteInstanceLockError(path: path)
        }
        self.path = path
        self.file = file
    }

    /// Gives the lock up, so another instance may start on the file; the descriptor stays open until the
    /// process's last connection to the file has closed.
    public func release() {
        let first = held.withLock { held in
            defer { held = false }
            return held
        }
        guard first else { return }
        file.unlockExclusively()
        file.release()
    }

    deinit { release() }
}

/// Another store, in this process or another, holds the database file's ``SQLiteInstanceLock``.
public struct SQLiteInstanceLockError: Error, CustomStringConvertible, Sendable {
    /// The path the refused lock was asked for.
    public var path: String
    public var description: String { "another store holds the single-instance lock of \(path)" }
}
