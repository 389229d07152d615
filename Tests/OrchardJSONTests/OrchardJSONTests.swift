import Foundation
import OrchardJSON
import Testing

@Suite("One JSON stack: the strict parser and the byte writer")
struct OrchardJSONTests {
    @Test("numbers keep their exact text; members keep their order")
    func exactNumbersAndOrder() throws {
        let value = try JSONValue.parse(Array(#"{"b": 1.50, "a": -0, "c": 1e2, "d": 123456789012345678901234}"#.utf8))
        #expect(value.members?.map(\.key) == ["b", "a", "c", "d"])
        #expect(value["b"] == .number("1.50"))
        #expect(value["a"] == .number("-0"))
        #expect(value["c"] == .number("1e2"))
        #expect(value["d"] == .number("123456789012345678901234"))
        #expect(value["b"]?.int64 == nil)
        #expect(
            String(decoding: value.serialized, as: UTF8.self)
                == #"{"b":1.50,"a":-0,"c":1e2,"d":123456789012345678901234}"#)
    }

    @Test(
        "refusals name their kind and offset",
        arguments: [
            (#"{"a": 1, "a": 2}"#, JSONParseError.Kind.invalid, "a duplicate key", 9),
            (#"{"n": 1e400}"#, .invalid, "a number out of range (beyond a 64-bit integer or a double)", 6),
            (#"{"s": "\ud800"}"#, .invalid, "a lone surrogate in a \\u escape", 13),
            (#"[1,]"#, .invalid, "unexpected character", 3),
            (#"{"a": 1} x"#, .invalid, "unexpected data after the JSON value", 9),
            (#"[[[[1]]]]"#, .tooDeep, "nesting deeper than 3 levels", 3),
            (#"{"abcdefghi": 1}"#, .stringTooLong, "a string longer than 8 bytes", 1),
            (
                #"["\u0041\u0042\u0043\u0044\u0045\u0046\u0047\u0048\u0049"]"#, .stringTooLong,
                "a string longer than 8 bytes", 1
            ),
            (#"[123456789]"#, .stringTooLong, "a string longer than 8 bytes", 1),
        ])
    func refusals(text: String, kind: JSONParseError.Kind, message: String, offset: Int) {
        let limits = JSONLimitSet(maxDepth: 3, maxStringLength: 8)
        let lenient = JSONLimitSet(maxDepth: 3, maxStringLength: 64)
        #expect {
            _ = try JSONValue.parse(Array(text.utf8), limits: kind == .stringTooLong ? limits : lenient)
        } throws: { error in
            guard let error = error as? JSONParseError else { return false }
            return error.kind == kind && error.message == message && error.offset == offset
        }
    }

    @Test("a number longer than maxNumberLength is refused; a string of that length is not")
    func numberLength() throws {
        let limits = JSONLimitSet(maxNumberLength: 4)
        #expect(throws: JSONParseError(.invalid, "number too long", offset: 1)) {
            try JSONValue.parse(Array("[12345]".utf8), limits: limits)
        }
        #expect(try JSONValue.parse(Array(#"["12345"]"#.utf8), limits: limits) == .array([.string("12345")]))
    }

    @Test("each parsed member knows where its value's bytes are, whitespace and order as sent")
    func valueRanges() throws {
        let text = #"{"token": { "b" : [1, 2], "a":"x" } , "n": 5}"#
        let bytes = Array(text.utf8)
        let value = try JSONValue.parse(bytes)
        let token = try #require(value.members?.first)
        let range = try #require(token.valueRange)
        #expect(String(decoding: bytes[range], as: UTF8.self) == #"{ "b" : [1, 2], "a":"x" }"#)
        #expect(token == JSONMember("token", try JSONValue.parse(bytes[range])))
    }

    @Test("the canonical form sorts names and writes each number one way, as the Foundation writer does")
    func canonical() throws {
        let value = try JSONValue.parse(
            Array(#"{"z": [2.0, 1e2, -0, 2.5, 18446744073709551615], "a": {"y": true, "x": null}}"#.utf8))
        let canonical = String(decoding: JSONWriter.canonical(value), as: UTF8.self)
        #expect(canonical == #"{"a":{"x":null,"y":true},"z":[2,100,0,2.5,18446744073709551615]}"#)
        let foundation = try JSONWriter.json(value.foundationValue)
        #expect(
            String(decoding: foundation, as: UTF8.self)
                == #"{"a":{"x":null,"y":true},"z":[2,100,0,2.5,1.8446744073709552e+19]}"#)
        #expect(
            try JSONWriter.json(["k": value]) == Data(#"{"k":"#.utf8) + JSONWriter.canonical(value) + Data("}".utf8))
    }

    @Test("the Foundation view: Int64 for integers that fit, Double otherwise")
    func foundationView() throws {
        let object = try #require(
            try JSONValue.parse(
                Array(#"{"i": 1, "d": 2.5, "big": 123456789012345678901234, "t": true, "n": null}"#.utf8)
            )
            .foundationValue as? [String: Any])
        #expect(type(of: object["i"]!) == Int64.self)
        #expect(type(of: object["d"]!) == Double.self)
        #expect(type(of: object["big"]!) == Double.self)
        #expect(type(of: object["t"]!) == Bool.self)
        #expect(object["n"] is NSNull)
    }

    @Test("strings: escapes written compactly; the sorted text escapes for scripts")
    func strings() throws {
        var out: [UInt8] = []
        JSONWriter.writeString("a\"b\\c/é\n\u{01}\u{2028}", to: &out)
        #expect(String(decoding: out, as: UTF8.self) == "\"a\\\"b\\\\c/é\\n\\u0001\u{2028}\"")
        #expect(JSONValue.stringLiteral("a\u{08}\u{2028}") == #""a\b\u2028""#)
        let sorted = JSONValue.object([JSONMember("b", .array([.integer(1)])), JSONMember("a", .string("x"))])
        #expect(String(decoding: sorted.sortedText(), as: UTF8.self) == "{\n  \"a\": \"x\",\n  \"b\": [\n    1\n  ]\n}")
        #expect(String(decoding: sorted.sortedText(pretty: false), as: UTF8.self) == #"{"a":"x","b":[1]}"#)
    }

    @Test(
        "what the parser reads, the writer writes back byte for byte (compact input)",
        arguments: [
            #"{"a":[1,-2.5e-3,true,false,null],"b":{"c":"\u0000\"\\"},"d":"é🍵"}"#, "[]", "{}", #""x""#, "0",
        ])
    func roundTrip(_ text: String) throws {
        #expect(try JSONValue.parse(Array(text.utf8)).serialized == Array(text.utf8))
    }
}
