import Foundation
import Gateway
import Testing

@Suite("Wire format: the JSON writer")
struct WireFormatTests {
    func text(_ object: Any) throws -> String { String(decoding: try WireFormat.json(object), as: UTF8.self) }

    @Test("compact, keys sorted by byte order, slashes and non-ASCII as they are, controls escaped")
    func layout() throws {
        #expect(
            try text(["b": 1, "a": ["z": true, "y": NSNull()], "a_b": [1, "x", false], "B": 2.5])
                == #"{"B":2.5,"a":{"y":null,"z":true},"a_b":[1,"x",false],"b":1}"#)
        #expect(try text("a/b \"q\" \\ é \u{2028}") == "\"a/b \\\"q\\\" \\\\ é \u{2028}\"")
        #expect(try text("\n\r\t\u{08}\u{0C}\u{01}\u{1F}") == #""\n\r\t\u0008\u000c\u0001\u001f""#)
        #expect(try text([String: Any]()) == "{}")
        #expect(try text([Any]()) == "[]")
    }

    @Test("numbers: integers of every width, integral doubles as integers, decimals as they print")
    func numbers() throws {
        #expect(
            try text([Int64.max, Int32.min, UInt8(7), UInt64.max])
                == "[9223372036854775807,-2147483648,7,18446744073709551615]")
        let doubles: [Any] = [100.0, 0.1, -2.5, 1e-7]
        #expect(try text(doubles) == "[100,0.1,-2.5,1e-07]")
        let floats: [Any] = [Float(0.1), Float(3), Float(1e30)]
        #expect(try text(floats) == "[0.1,3,1e+30]")
        let large: [Any] = [1e300, -1e20]
        #expect(try text(large) == "[1e+300,-1e+20]")
        #expect(try text([Decimal(string: "12.340")!]) == "[12.34]")
        #expect(throws: WireFormat.NotJSON.self) { try WireFormat.json([Double.nan]) }
        #expect(throws: WireFormat.NotJSON.self) { try WireFormat.json(["date": Date()]) }
        #expect(WireFormat.data(["bad": Double.infinity]).isEmpty)
    }

    @Test("what JSONSerialization parsed writes back the same: NSNumber booleans stay booleans")
    func parsedValues() throws {
        let source = #"{"amount":"12.34","count":3,"flag":true,"off":false,"list":[1,2.5,null,"s"],"nested":{"k":0}}"#
        let parsed = try JSONSerialization.jsonObject(with: Data(source.utf8))
        #expect(
            try text(parsed)
                == #"{"amount":"12.34","count":3,"flag":true,"list":[1,2.5,null,"s"],"nested":{"k":0},"off":false}"#)
        // The same object as JSONSerialization writes it, compared as values.
        let ours = try JSONSerialization.jsonObject(with: try WireFormat.json(parsed)) as? NSDictionary
        let theirs =
            try JSONSerialization.jsonObject(with: try JSONSerialization.data(withJSONObject: parsed)) as? NSDictionary
        #expect(ours == theirs)
    }

    @Test("RawJSON goes in unchanged: a stored webhook body inside the event envelope")
    func raw() throws {
        #expect(
            try text(["data": WireFormat.RawJSON(Data(#"{"x":[1]}"#.utf8)), "id": "evt_1"])
                == #"{"data":{"x":[1]},"id":"evt_1"}"#)
        let envelope = try WebhookEventEnvelope(
            id: "evt_2", type: "payment.succeeded", createdAt: Date(timeIntervalSince1970: 1_800_000_000),
            data: ["payment": ["id": "pay_1", "amount": "42.00"]])
        #expect(
            String(decoding: envelope.encoded(), as: UTF8.self)
                == #"{"created_at":"2027-01-15T08:00:00Z","data":{"payment":{"amount":"42.00","id":"pay_1"}},"id":"evt_2","type":"payment.succeeded"}"#
        )
        #expect(WebhookEventEnvelope(payload: envelope.encoded())?.encoded() == envelope.encoded())
    }
}
