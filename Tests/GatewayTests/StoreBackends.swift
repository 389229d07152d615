import Foundation
import Gateway
import GatewayPostgres
import GatewaySQLite
import OrchardTestSupport
import Testing

/// The stores the suite runs on. A PostgreSQL case needs `ORCHARD_TEST_POSTGRES_URL` (a role that may create
/// databases); without it the case is skipped with a message.
enum StoreBackend: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case sqlite
    case postgres

    /// Both backends: the arguments of every store and gateway test that runs on both.
    static let all: [StoreBackend] = allCases

    var testDescription: String { rawValue }


    static let skipMessage = "ORCHARD_TEST_POSTGRES_URL is not set: the PostgreSQL cases are skipped"

    /// Said once per run on standard error, since a cancelled case is otherwise reported like a passed one.
    private static let announceSkip: Void = {
        FileHandle.standardError.write(Data("note: \(skipMessage)\n".utf8))
    }()

    /// Skips (cancels) the current PostgreSQL case when no server is configured.
    func requireServer() throws {
        if self == .postgres, TestPostgres.serverURL == nil {
            StoreBackend.announceSkip
            try Test.cancel(Comment(rawValue: StoreBackend.skipMessage))
        }
    }
}

/// What the tests read from either store beyond the ``Store`` protocol.
protocol TestStore: Store {
    func appliedMigrations() throws -> [Int]
    var durableCommitCount: Int { get }
}

extension SQLiteStore: TestStore {}
extension PostgresStore: TestStore {}

/// A fresh database on the test server, dropped when the last reference goes.
final class PostgresTestDatabase: @unchecked Sendable {
    let name: String
    let url: String
    private let adminURL: String

    /// A database on the server at `admin` (by default `ORCHARD_TEST_POSTGRES_URL`).
    init(onServer admin: String? = TestPostgres.serverURL) throws {
        let admin = try #require(admin, "ORCHARD_TEST_POSTGRES_URL is not set")
        adminURL = admin
        name = "orchard_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        url = try #require(PostgresAdmin.url(admin, database: name))
        try PostgresAdmin.createDatabase(name, url: admin)
    }

    deinit { try? PostgresAdmin.dropDatabase(name, url: adminURL) }

    /// A store on this database.
    func store(configure: (inout PostgresStore.Configuration) -> Void = { _ in }) throws -> PostgresStore {
        var configuration = PostgresStore.Configuration(url: url)
        configure(&configuration)
        return try PostgresStore(configuration)
    }
}
