import Foundation
import Gateway
import OrchardHTTP

extension GatewayAPI {
    /// The merchant's processor settings (`PUT`/`GET /v1/processor`) and their connection test
    /// (`POST /v1/processor/test`), with the secret key or the console's session.
    func mountProcessorRoutes(_ router: inout Router) {
        router.get("/v1/processor", scope: .server, summary: "getProcessor", handler: endpoint(getProcessor))
        router.put("/v1/processor", scope: .server, summary: "putProcessor", handler: endpoint(putProcessor))
        router.post(
            "/v1/processor/test", scope: .server, summary: "testProcessor", handler: endpoint(testProcessor))
        // The processors' notifications: no Orchard credentials, each authenticated by its processor's signature.
        for (type, path) in gateway.processorNotificationPaths {
            router.post("/v1/processors/\(path)/{merchant_id}", summary: "receiveProcessorNotifications_\(type)") {
                [self] request, context in try processorNotifications(path: path, request, context)
            }
        }
    }

    /// `POST /v1/processors/{path}/{merchant_id}`: the notification verified and applied, answered with the
    /// processor's acknowledgement (`[accepted]`); `401 processor_signature_invalid` changes nothing.
    func processorNotifications(
        path: String, _ request: HTTPRequest, _ context: RequestContext
    ) throws
        -> HTTPResponse
    {
        let merchantID = try context.parameter("merchant_id")
        let headers = request.headers.map { ($0.name, $0.value) }
        do {
            let batch = try gateway.receiveProcessorNotifications(
                path: path, merchantID: merchantID,
                request: ProcessorNotificationRequest(body: request.body, headers: headers))
            return HTTPResponse(
                status: .ok, headers: ["Content-Type": batch.contentType], body: Data(batch.acknowledgement.utf8))
        } catch {
            let apiError = GatewayAPIError.from(error)
            context.record(apiError, cause: error)
            throw apiError
        }
    }

    func getProcessor(_ call: Call) throws -> HTTPResponse {
        Wire.response(Self.processorObject(try gateway.processorSettings(merchantID: call.merchant.id)))
    }

    func putProcessor(_ call: Call) throws -> HTTPResponse {
        guard let json = call.parsedBody?.json, json.members != nil else {
            throw GatewayAPIError.make(
                .badRequest, .invalidRequest, "invalid_json", "the body is a JSON object of the processor's settings")
        }
        let fields = try ProcessorSettingsBody.fields(json)
        let view = try gateway.setProcessorSettings(merchantID: call.merchant.id, body: fields, scope: call.scope)
        return Wire.response(Self.processorObject(view))
    }

    func testProcessor(_ call: Call) throws -> HTTPResponse {
        let test = try gateway.testProcessorConnection(merchantID: call.merchant.id)
        return Wire.response([
            "outcome": test.outcome.rawValue, "message": test.message,
            "http_status": test.httpStatus.map { $0 as Any } ?? NSNull(),
        ])
    }

    /// The `ProcessorSettings` schema: no secret, only each one's last four characters.
    static func processorObject(_ view: ProcessorSettingsView) -> [String: Any] {
        [
            "type": Wire.value(view.type), "environment": Wire.value(view.environment), "configured": view.configured,
            "version": view.version.map { $0 as Any } ?? NSNull(), "fields": view.fields,
            "secret_hints": view.secretHints.mapValues { "…" + $0 },
            "updated_at": view.updatedAt.map { Wire.time($0) as Any } ?? NSNull(),
        ]
    }
}
