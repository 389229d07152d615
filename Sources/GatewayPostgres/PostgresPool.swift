import OrchardBase
import Foundation

/// A bounded pool of connections to one database. A caller waits while all are busy; a connection that was
/// lost, or left inside a transaction, is closed instead of returned. Connections open lazily.
// Unchecked: its libpq connections (not Sendable) are guarded by the condition variable `condition`; a borrowed one is used by one thread.
final class PostgresPool: @unchecked Sendable {
    private let connect: () throws -> PGConnection
    private let size: Int
    private let condition = NSCondition()
    private var idle: [PGConnection] = []
    private var open = 0

    init(size: Int, connect: @escaping () throws -> PGConnection) {
        self.size = max(size, 1)
        self.connect = connect
    }

    /// An idle connection, or a new one while fewer than `size` are open.
    func acquire() throws -> PGConnection {
        condition.lock()
        while idle.isEmpty && open >= size { condition.wait() }
        if let connection = idle.popLast() {
            condition.unlock()
            return connection
        }
        open += 1
        condition.unlock()
        do {
            return try connect()
        } catch {
            condition.lock()
            open -= 1
            condition.signal()
            condition.unlock()
            throw error
        }
    }

    /// Gives a connection back (or closes it when it is no longer usable).
    func release(_ connection: PGConnection) {
        condition.lock()
        if connection.isHealthy && !connection.inTransaction {
            idle.append(connection)
        } else {
            open -= 1
        }
        condition.signal()
        condition.unlock()
    }

    /// Closes the idle connections: after one was lost (a server restart), the others are lost too.
    func dropIdle() {
        condition.lock()
        open -= idle.count
        idle.removeAll()
        condition.broadcast()
        condition.unlock()
    }
}
