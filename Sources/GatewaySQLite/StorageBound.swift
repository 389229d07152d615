import CSQLite
import Foundation

/// The storage bound of a directory: how many single-row SQLite transactions per second commit there with
/// the store's settings (WAL, `synchronous=FULL`), one `fdatasync` each. With group commit this bounds the
/// fsyncs per second, not the writes.
public enum StorageBound {
    /// Commits single-row inserts into a scratch database in `directory` for `seconds` (after a short
    /// warm-up) and returns commits per second. The scratch files are removed.
    public static func singleRowCommitsPerSecond(directory: String, seconds: Double) throws -> Double {
        let path = (directory as NSString).appendingPathComponent("storage-bound-\(UUID().uuidString.prefix(8)).db")
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        let db = try SQLiteConnection(path: path)
        _ = try db.query("PRAGMA journal_mode=WAL") { $0.text(0) }
        try db.execute("PRAGMA synchronous=FULL; CREATE TABLE rows (id INTEGER PRIMARY KEY, value BLOB NOT NULL);")
        let value = Data(repeating: 0x5a, count: 200)
        func commitOne() throws {
            try db.execute("BEGIN IMMEDIATE")
            try db.run("INSERT INTO rows (value) VALUES (?)", [.blob(value)])
            try db.execute("COMMIT")
        }
        for _ in 0..<50 { try commitOne() }
        let start = DispatchTime.now().uptimeNanoseconds
        let end = start + UInt64(seconds * 1e9)
        var commits = 0
        var now = start
        while now < end {
            try commitOne()
            commits += 1
            now = DispatchTime.now().uptimeNanoseconds
        }
        return Double(commits) / (Double(now - start) / 1e9)
    }
}
