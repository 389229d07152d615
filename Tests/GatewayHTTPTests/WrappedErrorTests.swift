import Foundation
import Gateway
import GatewayTestSupport
import Testing

@testable import GatewayHTTP
@testable import OrchardHTTP

/// A foreign error as a store would throw it, with text that must stay out of the client's response.
struct DiskTrouble: Error, CustomStringConvertible {
    var description: String { "disk I/O error at page 7" }
}

@Suite("Wrapped errors: named internally, generic to the client")
struct WrappedErrorTests {
    @Test("wrap keeps a gateway error as it is and names a foreign one's type in description")
    func wrapNames() {
        let passed = GatewayError.wrap(GatewayError(.notFound, "no such payment"))
        #expect(passed.code == .notFound && passed.wrapped == nil)
        let wrapped = GatewayError.wrap(DiskTrouble())
        #expect(wrapped.code == .storageFailure)
        #expect(wrapped.wrapped?.hasSuffix("DiskTrouble") == true)
        #expect(String(describing: wrapped).contains("(wrapped GatewayHTTPTests.DiskTrouble)"))
        #expect(String(describing: wrapped).contains("disk I/O error"))
        // Never encoded: a stored error carries no wrapped type.
        let encoded = String(decoding: (try? JSONEncoder().encode(wrapped)) ?? Data(), as: UTF8.self)
        #expect(encoded.contains("storage_failure") && !encoded.contains("DiskTrouble"))
    }

    @Test("the access log names the wrapped error of a 500; the response says only internal_error")
    func logButNotResponse() throws {
        let log = LineCollector()
        let middleware = AccessLogMiddleware { log.append($0) }
        let context = RequestContext(requestID: "req_wrapped")
        let response = try middleware.handle(HTTPRequest(method: .get, path: "/v1/payments"), context: context) {
            _, context in
            let cause = GatewayError.wrap(DiskTrouble())
            let apiError = GatewayAPIError.from(cause)
            context.record(apiError, cause: cause)
            return apiError.response(requestID: context.requestID)
        }
        let body = String(decoding: response.body, as: UTF8.self)
        #expect(response.status.rawValue == 500)
        #expect(body.contains("\"code\":\"internal_error\""))
        #expect(!body.contains("DiskTrouble") && !body.contains("disk I/O") && !body.contains("storage_failure"))
        let line = try #require(log.lines.first)
        #expect(line.contains(#""error_code":"internal_error""#))
        #expect(line.contains(#""error_detail":"storage_failure (wrapped GatewayHTTPTests.DiskTrouble)""#))
        #expect(!line.contains("disk I/O"))
    }

    @Test("a 4xx answer has no error_detail")
    func noDetailFor4xx() throws {
        let log = LineCollector()
        let middleware = AccessLogMiddleware { log.append($0) }
        _ = try middleware.handle(
            HTTPRequest(method: .get, path: "/v1/payments/x"), context: RequestContext(requestID: "req_4")
        ) {
            _, context in
            let cause = GatewayError(.notFound, "no such payment")
            let apiError = GatewayAPIError.from(cause)
            context.record(apiError, cause: cause)
            return apiError.response(requestID: context.requestID)
        }
        #expect(log.lines.first?.contains("error_detail") == false)
    }
}
