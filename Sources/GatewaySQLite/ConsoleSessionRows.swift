import Foundation
import Gateway

extension SQLiteTransaction {
    private static let consoleSessionColumns = "id, token_hash, merchant_id, created_at, last_seen_at, ended_at"

    func insertConsoleSession(_ session: ConsoleSessionRecord) throws {
        try db.run(
            "INSERT INTO console_sessions (\(Self.consoleSessionColumns)) VALUES (?, ?, ?, ?, ?, ?)",
            [
                .text(session.id), .text(session.tokenHash), .text(session.merchantID), SQLValue(session.createdAt),
                SQLValue(session.lastSeenAt), SQLValue(session.endedAt),
            ])
    }

    func consoleSession(tokenHash: String) throws -> ConsoleSessionRecord? {
        try db.query(
            "SELECT \(Self.consoleSessionColumns) FROM console_sessions WHERE token_hash = ?", [.text(tokenHash)]
        ) { row in
            ConsoleSessionRecord(
                id: row.text(0), tokenHash: row.text(1), merchantID: row.text(2), createdAt: row.date(3),
                lastSeenAt: row.date(4), endedAt: row.optionalDate(5))
        }.first
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
