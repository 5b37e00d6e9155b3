"""Feature case-conversion: `split_words`, `snake_case`, `kebab_case`, `camel_case`."""

import pytest

from textkit import camel_case, kebab_case, snake_case, split_words


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("hello world", ["hello", "world"]),
        ("helloWorld", ["hello", "World"]),
        ("HelloWorld", ["Hello", "World"]),
        ("HTTPServer", ["HTTP", "Server"]),
        ("getHTTPResponseCode", ["get", "HTTP", "Response", "Code"]),
        ("snake_case-and.dots", ["snake", "case", "and", "dots"]),
        ("version2Update", ["version2", "Update"]),
        ("  __private and trailing__  ", ["private", "and", "trailing"]),
        ("ABC", ["ABC"]),
        ("", []),
    ],
)
def test_split_words(text, words):
    assert split_words(text) == words


def test_snake_case():
    assert snake_case("Hello World") == "hello_world"
    assert snake_case("HTTPServer error") == "http_server_error"
    assert snake_case("some-kebab-name") == "some_kebab_name"


def test_kebab_case():
    assert kebab_case("someVariableName") == "some-variable-name"
    assert kebab_case("Hello  World!") == "hello-world"


def test_camel_case():
    assert camel_case("hello world") == "helloWorld"
    assert camel_case("snake_case_name") == "snakeCaseName"
    assert camel_case("get HTTP response") == "getHttpResponse"
    assert camel_case("HTTPServer") == "httpServer"


def test_round_trip_and_empty():
    assert snake_case(camel_case("the quick brown fox")) == "the_quick_brown_fox"
    assert snake_case("") == kebab_case("") == camel_case("") == ""
