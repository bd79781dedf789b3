// Which successful answers are a proxy's or a captive portal's page (issue 36 §4): by the first bytes,
// since emulators label their XML `text/html`.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { isHtml } from '../../../src/context/aws-html.js'

const bytes = (s: string) => new TextEncoder().encode(s)

test('isHtml: a page, whatever its case or leading space', () => {
  for (const page of [
    '<!DOCTYPE html><html>',
    '\n  <html lang="en">',
    '<head><title>Wi-Fi</title>',
    '<BODY>x',
  ])
    assert.equal(isHtml(bytes(page)), true, page)
})

test('isHtml: AWS XML and JSON answers, and nothing, are not', () => {
  for (const body of [
    '<?xml version="1.0" encoding="UTF-8"?>\n<DescribeInstanceTypesResponse>',
    '<DescribeInstanceTypesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">',
    '<htmlish/>',
    '{"cluster":{}}',
    '',
  ])
    assert.equal(isHtml(bytes(body)), false, body)
})
