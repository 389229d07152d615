import OrchardHTTP
import Foundation
import Gateway

/// The actor an authenticated request's changes are recorded under in the audit log: set by the authentication
/// (`api` and the secret key's public part; a console session sets its own), and passed to the endpoint's
/// operations in its ``RequestScope``.
public enum AuditActorKey: RequestContextKey {
    public typealias Value = AuditActor
}

extension GatewayAPI {
    func mountAuditRoutes(_ router: inout Router) {
        router.get("/v1/audit-log", scope: .server, summary: "listAuditLog", handler: endpoint(listAuditLog))
    }

    /// `GET /v1/audit-log?limit=&starting_after=`: the merchant's audit entries, newest first.
    func listAuditLog(_ call: Call) throws -> HTTPResponse {
        let page = try gateway.auditLog(
            merchant: call.merchant, limit: try Self.limit(call.request),
            startingAfter: call.request.query("starting_after"))
        return Wire.response([
            "object": "list", "data": page.entries.map(Self.auditEntryObject), "has_more": page.hasMore,
            "next_cursor": Wire.value(page.nextCursor),
        ])
    }

    /// An entry as `GET /v1/audit-log` shows it.
    static func auditEntryObject(_ entry: AuditEntry) -> [String: Any] {
        [
            "id": entry.id, "action": entry.action, "actor": ["kind": entry.actor.kind, "name": entry.actor.name],
            "target": Wire.value(entry.target), "detail": entry.detail, "created_at": Wire.time(entry.createdAt),
        ]
    }
}
