import Foundation
import OrchardJSON

/// Bounds on a JSON body, enforced by the one strict parse every JSON request body gets.
public struct JSONLimits: Sendable, Equatable {
    /// The deepest nesting of objects and arrays allowed (a top-level object is depth 1).
    public var maxDepth: Int
    /// The longest string (or object key, or number) allowed, in UTF-8 bytes after unescaping.
    public var maxStringLength: Int

    /// Limits; the defaults are those `orchard serve` enforces: depth 16 and 16 KiB strings.
    public init(maxDepth: Int = 16, maxStringLength: Int = 16_384) {
        self.maxDepth = maxDepth
        self.maxStringLength = maxStringLength
    }

    /// Checks that `body` is one well-formed JSON value within the limits.
    ///
    /// - Throws: as ``parse(_:)``.
    public func validate(_ body: Data) throws(HTTPAPIError) {
        _ = try parse(body)
    }

    /// Parses `body` as one JSON value (RFC 8259), strictly and within the limits (``JSONValue/parse(_:limits:)``):
    /// duplicate object keys are refused, `true`/`false` are the only booleans, and a number must fit a 64-bit
    /// integer or a finite double. Numbers keep their exact text.
    ///
    /// - Throws: ``HTTPAPIError`` `invalid_json`, `json_too_deep` or `string_too_long` (400), naming the byte
    ///   offset but never quoting a value of the body.
    public func parse(_ body: Data) throws(HTTPAPIError) -> JSONBody {
        let limits = JSONLimitSet(maxDepth: maxDepth, maxStringLength: maxStringLength)
        do throws(JSONParseError) {
            return JSONBody(json: try JSONValue.parse(body, limits: limits), bytes: body)
        } catch {
            switch error.kind {
            case .invalid:
                throw .invalidJSON("the request body is not valid JSON: \(error.message) at byte \(error.offset)")
            case .tooDeep:
                throw HTTPAPIError(
                    status: .badRequest, type: .invalidRequest, code: .jsonTooDeep,
                    message: "the JSON body nests deeper than \(maxDepth) levels (at byte \(error.offset))")
            case .stringTooLong:
                throw HTTPAPIError(
                    status: .badRequest, type: .invalidRequest, code: .stringTooLong,
                    message:
                        "a JSON string in the body is longer than \(maxStringLength) bytes (at byte \(error.offset))")
            }
        }
    }
}

/// A request body parsed by ``JSONLimits/parse(_:)``, kept in the ``RequestContext`` so that a request is
/// parsed once (``ParsedJSONBodyKey``): the value, and the bytes it was parsed from (a nested document such as a
/// token is passed on as those bytes, ``JSONMember/valueRange``).
public struct JSONBody: Sendable {
    /// The parsed value.
    public let json: JSONValue
    /// The body it was parsed from.
    public let bytes: Data

    /// A parsed body.
    public init(json: JSONValue, bytes: Data) {
        self.json = json
        self.bytes = bytes
    }

    /// The exact bytes of `member`'s value as they appeared in the body.
    public func bytes(of member: JSONMember) -> Data? {
        guard let range = member.valueRange, range.upperBound <= bytes.count else { return nil }
        let start = bytes.startIndex
        return bytes.subdata(in: (start + range.lowerBound)..<(start + range.upperBound))
    }
}

/// The key under which ``JSONLimitsMiddleware`` keeps the parsed body.
public enum ParsedJSONBodyKey: RequestContextKey {
    public typealias Value = JSONBody
}
