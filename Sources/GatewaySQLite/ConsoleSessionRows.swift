import Foundation
import Gateway

extension SQLiteTransaction {
    func insertConsoleSession(_ session: ConsoleSessionRecord) throws {
        try db.run(
            "INSERT INTO console_sessions (\(ConsoleSessionRecord.storeColumns)) VALUES (?, ?, ?, ?, ?, ?)",
            [
                .text(session.id), .text(session.tokenHash), .text(session.merchantID), SQLValue(session.createdAt),
                SQLValue(session.lastSeenAt), SQLValue(session.endedAt),
            ])
    }

    func consoleSession(tokenHash: String) throws -> ConsoleSessionRecord? {
        try db.query(
            "SELECT \(ConsoleSessionRecord.storeColumns) FROM console_sessions WHERE token_hash = ?", [.text(tokenHash)]
        ) { ConsoleSessionRecord(row: $0) }.first
    }

    func updateConsoleSession(_ session: ConsoleSessionRecord) throws {
        try db.run(
            "UPDATE console_sessions SET last_seen_at = ?, ended_at = ? WHERE id = ?",
            [SQLValue(session.lastSeenAt), SQLValue(session.endedAt), .text(session.id)])
    }

    func purgeConsoleSessions(lastSeenBefore: Date) throws -> Int {
        try db.run("DELETE FROM console_sessions WHERE last_seen_at < ?", [SQLValue(lastSeenBefore)])
    }
}
