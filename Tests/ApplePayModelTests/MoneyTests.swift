import ApplePayModel
import Foundation
import Testing

@Suite("Money")
struct MoneyTests {
    struct Parse: CustomTestStringConvertible, Sendable {
        var text: String
        var currency: Currency
        var canonical: String
        var minorUnits: Int64
        var testDescription: String { "\(text) \(currency.code)" }
    }

    @Test(
        "parses decimal strings at exponents 0, 2 and 3",
        arguments: [
            Parse(text: "12.75", currency: .usd, canonical: "12.75", minorUnits: 1275),
            Parse(text: "12.5", currency: .usd, canonical: "12.50", minorUnits: 1250),
            Parse(text: "100", currency: .twd, canonical: "100.00", minorUnits: 10_000),
            Parse(text: "100", currency: .jpy, canonical: "100", minorUnits: 100),
            Parse(text: "1.234", currency: .kwd, canonical: "1.234", minorUnits: 1234),
            Parse(text: "0.001", currency: .kwd, canonical: "0.001", minorUnits: 1),
            Parse(text: "-5.00", currency: .usd, canonical: "-5.00", minorUnits: -500),
            Parse(text: "-0.05", currency: .eur, canonical: "-0.05", minorUnits: -5),
            Parse(text: "-7", currency: .jpy, canonical: "-7", minorUnits: -7),
            Parse(text: "0", currency: .usd, canonical: "0.00", minorUnits: 0),
            Parse(text: "-0.00", currency: .usd, canonical: "0.00", minorUnits: 0),
            Parse(text: "007.50", currency: .usd, canonical: "7.50", minorUnits: 750),
        ])
    func parses(_ parse: Parse) throws {
        let money = try Money(parse.text, currency: parse.currency)
        #expect(money.decimalString == parse.canonical)
        #expect(try money.minorUnits == parse.minorUnits)
        #expect(Money(minorUnits: parse.minorUnits, currency: parse.currency) == money)
        #expect(try Money(money.decimalString, currency: parse.currency) == money)
    }

    @Test(
        "refuses what is not a plain decimal",
        arguments: [
            "1e3", "12,5", " 1", "1 ", "+1", "NaN", "nan", "Infinity", "", "-", ".5", "1.", "1..2", "1.2.3", "--1",
            "0x10", "１", "1_000", "٣",
        ])
    func refusesSyntax(_ text: String) {
        #expect(throws: MoneyError(.invalidAmount, "")) { try Money(text, currency: .usd) }
    }

    @Test(
        "refuses more decimals than the currency allows, without rounding",
        arguments: [
            ("1.234", Currency.usd), ("100.5", .jpy), ("1.0", .jpy), ("1.2345", .kwd), ("0.001", .twd),
            ("-44.505", .twd),
        ])
    func refusesDecimals(_ text: String, _ currency: Currency) {
        #expect(throws: MoneyError(.tooManyDecimals, "")) { try Money(text, currency: currency) }
    }

    @Test("0.1 + 0.2 == 0.3, and ten dimes make a dollar")
    func exactArithmetic() throws {
        let sum = try Money("0.1", currency: .usd) + Money("0.2", currency: .usd)
        #expect(sum == (try Money("0.3", currency: .usd)))
        #expect(sum.decimalString == "0.30")
        let dimes = try Money.sum(Array(repeating: Money("0.10", currency: .usd), count: 10), currency: .usd)
        #expect(dimes == (try Money("1.00", currency: .usd)))
        let kwd = try Money("0.001", currency: .kwd) + Money("0.002", currency: .kwd)
        #expect(kwd.decimalString == "0.003")
    }

    @Test("a negative discount item reduces the sum; subtraction and negation are exact")
    func negativeDiscount() throws {
        let items = try ["360.00", "85.00", "-44.50"].map { try Money($0, currency: .twd) }
        let total = try Money.sum(items, currency: .twd)
        #expect(total.decimalString == "400.50")
        #expect(try total.minorUnits == 40_050)
        let discount = try Money("-44.50", currency: .twd)
        #expect(discount.isNegative)
        #expect((-discount).decimalString == "44.50")
        #expect(try (total - items[0]).decimalString == "40.50")
        #expect(try discount.isLess(than: .zero(.twd)))
    }

    @Test("huge amounts: exact to 30 digits, minor units refused beyond Int64")
    func hugeAmounts() throws {
        let max = Money(minorUnits: .max, currency: .usd)
        #expect(max.decimalString == "92233720368547758.07")
        #expect(try max.minorUnits == .max)
        let min = Money(minorUnits: .min, currency: .jpy)
        #expect(try min.minorUnits == .min)
        let beyond = try max + Money("0.01", currency: .usd)
        #expect(beyond.decimalString == "92233720368547758.08")
        #expect(throws: MoneyError(.amountOutOfRange, "")) { try beyond.minorUnits }
        let thirty = String(repeating: "9", count: 28) + ".99"
        let big = try Money(thirty, currency: .usd)
        #expect(big.decimalString == thirty)
        #expect(
            try (big + Money("0.01", currency: .usd)).decimalString == "1" + String(repeating: "0", count: 28) + ".00")
        #expect(throws: MoneyError(.amountOutOfRange, "")) {
            try Money(String(repeating: "1", count: 31), currency: .jpy)
        }
    }

    @Test("adding or comparing different currencies is refused")
    func currencyMismatch() throws {
        let usd = try Money("1.00", currency: .usd)
        let twd = try Money("1.00", currency: .twd)
        #expect(throws: MoneyError(.currencyMismatch, "")) { try usd + twd }
        #expect(throws: MoneyError(.currencyMismatch, "")) { try usd.isLess(than: twd) }
        #expect(throws: MoneyError(.currencyMismatch, "")) { try Money.sum([usd, twd], currency: .usd) }
    }

    @Test("errors compare by code and describe themselves")
    func errors() {
        #expect(MoneyError(.unknownCurrency, "a") == MoneyError(.unknownCurrency, "b"))
        #expect(MoneyError(.unknownCurrency, "a") != MoneyError(.invalidAmount, "a"))
        #expect(MoneyError(.tooManyDecimals, "why").description == "too_many_decimals: why")
        #expect(MoneyError.Code.negativeAmount.rawValue == "negative_amount")
        #expect(MoneyError.Code.invalidCountryCode.rawValue == "invalid_country_code")
    }
}

@Suite("Currencies and countries")
struct CurrencyTests {
    @Test(
        "ISO 4217 codes, numeric codes and exponents",
        arguments: [
            ("TWD", "901", 2), ("USD", "840", 2), ("JPY", "392", 0), ("KWD", "414", 3), ("EUR", "978", 2),
            ("BHD", "048", 3), ("CLF", "990", 4), ("KRW", "410", 0), ("AUD", "036", 2), ("ALL", "008", 2),
        ])
    func lookups(_ code: String, _ numeric: String, _ exponent: Int) throws {
        let currency = try Currency(code: code)
        #expect(currency.numericCode == numeric)
        #expect(currency.minorUnitExponent == exponent)
        #expect(try Currency(numericCode: numeric) == currency)
    }

    @Test("numeric codes are zero padded; unknown codes and lower case are refused")
    func refusals() throws {
        #expect(try Currency(numericCode: "36") == .aud)
        #expect(try Currency(numericCode: "8").code == "ALL")
        for bad in ["twd", "XYZ", "", "TWDX", "XAU"] {
            #expect(throws: MoneyError(.unknownCurrency, "")) { try Currency(code: bad) }
        }
        for bad in ["999", "abc", "", "0901"] {
            #expect(throws: MoneyError(.unknownCurrency, "")) { try Currency(numericCode: bad) }
        }
    }

    @Test("the table has unique codes and numeric codes, and the constants agree with it")
    func table() throws {
        #expect(Set(Currency.all.map(\.code)).count == Currency.all.count)
        #expect(Set(Currency.all.map(\.numericCode)).count == Currency.all.count)
        #expect(Currency.all.count > 150)
        for constant in [Currency.usd, .twd, .jpy, .eur, .kwd, .gbp, .hkd, .sgd, .krw, .cny, .aud, .cad, .bhd, .sar] {
            #expect(try Currency(code: constant.code) == constant)
        }
    }

    @Test("currencies and countries encode as their code strings")
    func codable() throws {
        struct Box: Codable, Equatable {
            var currency: Currency
            var country: CountryCode
        }
        let data = try JSONEncoder().encode(Box(currency: .twd, country: .tw))
        #expect(String(decoding: data, as: UTF8.self).contains("\"TWD\""))
        #expect(try JSONDecoder().decode(Box.self, from: data) == Box(currency: .twd, country: .tw))
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Box.self, from: Data(#"{"currency":"TWD","country":"XX"}"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Box.self, from: Data(#"{"currency":"ABC","country":"TW"}"#.utf8))
        }
    }

    @Test(
        "ISO 3166-1 alpha-2: the 249 assigned codes, nothing else", arguments: ["tw", "ZZ", "UK", "EU", "T", "TWN", ""])
    func countries(_ bad: String) throws {
        #expect(CountryCode.assigned.count == 249)
        #expect(try CountryCode("TW").code == "TW")
        #expect(try CountryCode("GB") != CountryCode("US"))
        #expect(throws: MoneyError(.invalidCountryCode, "")) { try CountryCode(bad) }
    }
}
