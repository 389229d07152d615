import Foundation
import Gateway

extension PostgresTransaction {
    private static let consoleSessionColumns = "id, token_hash, merchant_id, created_at, last_seen_at, ended_at"

    func insertConsoleSession(_ session: ConsoleSessionRecord) throws {
        _ = try db.run(
            "INSERT INTO console_sessions (\(Self.consoleSessionColumns)) VALUES ($1, $2, $3, $4, $5, $6)",
            [
                .text(session.id), .text(session.tokenHash), .text(session.merchantID),
                .timestamptz(session.createdAt), .timestamptz(session.lastSeenAt), PGValue(session.endedAt),
            ])
    }

    func consoleSession(tokenHash: String) throws -> ConsoleSessionRecord? {
        try db.query(
            "SELECT \(Self.consoleSessionColumns) FROM console_sessions WHERE token_hash = $1", [.text(tokenHash)]
        ) { row in
            ConsoleSessionRecord(
                id: row.text(0), tokenHash: row.text(1), merchantID: row.text(2), createdAt: row.date(3),
                lastSeenAt: row.date(4), endedAt: row.optionalDate(5))
        }.first
    }

    func updateConsoleSession(_ session: ConsoleSessionRecord) throws {
        _ = try db.run(
            "UPDATE console_sessions SET last_seen_at = $1, ended_at = $2 WHERE id = $3",
            [.timestamptz(session.lastSeenAt), PGValue(session.endedAt), .text(session.id)])
    }

    func purgeConsoleSessions(lastSeenBefore: Date) throws -> Int {
        try db.change("DELETE FROM console_sessions WHERE last_seen_at < $1", [.timestamptz(lastSeenBefore)])
    }
}
