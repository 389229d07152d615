import OrchardHTTP
import Foundation
import Gateway

/// `GET/PUT /v1/co-brand-table` (`openapi.yaml`, tag "Configuration"): BIN ranges → affiliate codes, returned
/// in `merchant_reference_info.affiliate_codes` when a card's BIN falls in a range.
extension GatewayAPI {
    func getCoBrandTable(_ call: Call) throws -> HTTPResponse {
        Wire.response(Self.coBrandObject(try gateway.merchants.coBrandTable(merchantID: call.merchant.id)))
    }

    func putCoBrandTable(_ call: Call) throws -> HTTPResponse {
        let ranges: [CoBrandRange]
        if call.request.headers.mediaType == "text/csv" {
            guard let csv = String(data: call.request.body, encoding: .utf8) else {
                throw HTTPAPIError.unsupportedMediaType("the co-brand table must be UTF-8 text/csv")
            }
            ranges = try gateway.merchants.loadCoBrandTable(merchantID: call.merchant.id, csv: csv, scope: call.scope)
        } else {
            let body = try RequestBody(call, required: true)
            guard let list = body.raw("ranges") else { throw body.missing("ranges") }
            guard case .array(let items) = list else { throw body.invalid("ranges", "an array of ranges") }
            // A row that is not an object, or whose fields are not strings, is reported by its position.
            let rows = items.map { item -> CoBrandRow in
                func field(_ name: String) -> String { item[name]?.string ?? "" }
                return CoBrandRow(
                    binLow: field("bin_low"), binHigh: field("bin_high"), affiliateCode: field("affiliate_code"))
            }
            ranges = try gateway.merchants.setCoBrandTable(merchantID: call.merchant.id, rows: rows, scope: call.scope)
        }
        return Wire.response(Self.coBrandObject(ranges))
    }

    static func coBrandObject(_ ranges: [CoBrandRange]) -> [String: Any] {
        func bin(_ value: Int64) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, 8 - digits.count)) + digits
        }
        return [
            "ranges": ranges.map {
                ["bin_low": bin($0.low), "bin_high": bin($0.high), "affiliate_code": $0.code] as [String: Any]
            }
        ]
    }
}
