import Foundation
import Gateway
import GatewayAssembly
import GatewayPostgres
import GatewaySQLite

/// `orchard migrate --from sqlite:PATH --to postgres://…`: copies a whole gateway database into an empty
/// PostgreSQL database, sealed secrets still sealed.
enum MigrateCommand {
    static let command = CLI.Command(
        name: "migrate", summary: "copy a SQLite gateway database, with everything in it, into an empty PostgreSQL one",
        run: run)

    static let usage = """
        usage: orchard migrate --from sqlite:PATH --to postgres://USER@HOST:PORT/DB

        Copies every table (merchants and their sealed keys, payments, refunds, sessions, primes, events and
        their delivery state, idempotency records, BIN tables, settings, the sandbox acquirer's ledger) in one
        PostgreSQL transaction. Sealed secrets are copied as they are: the gateway on PostgreSQL needs the same
        master key. The target must hold no gateway rows. Before committing, the row count of every table is
        compared with the source and the ledger audit (orchard audit) runs on the copy; any failure leaves the
        target empty, so the command can be run again. Stop the gateway on the SQLite file first.
        Exit status: 0 copied, 1 refused or failed (the error code is printed), 2 bad usage.
        """

    static func run(_ arguments: [String], _ io: CLIOutput) -> Int32 {
        let sourcePath: String
        let target: GatewayRuntime.Options
        let configuration: PostgresStore.Configuration
        do {
            let parsed = try Arguments.parse(arguments, options: ["from", "to"])
            sourcePath = try GatewayDatabase.sqlitePath(try parsed.required("from"))
            let to = try parsed.required("to")
            guard GatewayDatabase.isPostgres(to) else { throw UsageError("--to must be a postgres:// URL") }
            target = try GatewayDatabase.options(to)
            guard let postgres = target.postgres else { throw UsageError("--to must be a postgres:// URL") }
            configuration = postgres
            guard FileManager.default.fileExists(atPath: sourcePath) else {
                throw UsageError("no database at \(sourcePath)")
            }
        } catch {
            return io.report(error, of: "orchard migrate", usage: usage, failure: nil)
        }
        let shown = GatewayDatabase.display(target)
        do {
            let source = try SQLiteStore(path: sourcePath)
            let report = try StoreCopy.copy(from: source, to: try PostgresStore(configuration))
            for (table, count) in report.rows { io.out("\(table): \(count) rows") }
            io.out("row counts match; audit: \(report.audit.paymentsChecked) payments, all invariants hold")
            io.out("copied sqlite:\(sourcePath) to \(shown)")
            return 0
        } catch let error as StoreCopyError {
            io.err("orchard migrate: \(error) (target \(shown))")
            return 1
        } catch {
            io.err("orchard migrate: copy_failed: \(error) (target \(shown))")
            return 1
        }
    }
}
