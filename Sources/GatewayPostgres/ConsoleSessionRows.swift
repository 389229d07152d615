import Foundation
import Gateway

extension PostgresTransaction {
    func insertConsoleSession(_ session: ConsoleSessionRecord) throws {
        _ = try db.run(
            "INSERT INTO console_sessions (\(ConsoleSessionRecord.storeColumns)) VALUES ($1, $2, $3, $4, $5, $6)",
            [
                .text(session.id), .text(session.tokenHash), .text(session.merchantID),
                .timestamptz(session.createdAt), .timestamptz(session.lastSeenAt), PGValue(session.endedAt),
            ])
    }

    func consoleSession(tokenHash: String) throws -> ConsoleSessionRecord? {
        try db.query(
            "SELECT \(ConsoleSessionRecord.storeColumns) FROM console_sessions WHERE token_hash = $1",
            [.text(tokenHash)]
        ) { ConsoleSessionRecord(row: $0) }.first
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
