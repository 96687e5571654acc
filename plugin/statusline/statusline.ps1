# delegate's status line reader for Windows, copied to <data home>\bin\ by
# `delegate statusline install`. The same contract as delegate-statusline.sh: Claude Code runs
# it on every refresh, and it starts no Node process. The delegate server and task workers keep
# every project's line pre-rendered in <data home>\status\lines, one
# "<expires, epoch s> <project real path><TAB><text>" line per part (after a "clock" line the
# sh reader uses); this prints this project's parts that have not expired yet, or nothing.
# Given a session_id (and a file with a "sessions" line), it reads the
# "session <id> <expires> <project><TAB><text>" lines instead: this session's own parts, then
# how many other sessions have some ("+2 other sessions").
# The optional argument is a file holding the status line command this one chains: it runs
# first, on the same stdin, and its output comes first.
param([string]$Chain)
$ErrorActionPreference = 'SilentlyContinue'
[Console]::OutputEncoding = [System.Text.Encoding]::UTF8

$raw = [Console]::In.ReadToEnd()

if ($Chain -and (Test-Path -LiteralPath $Chain)) {
  $previous = (Get-Content -LiteralPath $Chain -Raw).Trim()
  if ($previous) {
    $bash = Get-Command bash -ErrorAction SilentlyContinue
    if ($bash) { $raw | & $bash.Source -c $previous } else { $raw | & cmd.exe /d /c $previous }
  }
}

$dataHome = Split-Path -Parent (Split-Path -Parent $PSCommandPath)
$file = Join-Path (Join-Path $dataHome 'status') 'lines'
if (-not (Test-Path -LiteralPath $file)) { exit 0 }

$dir = $null
$session = $null
try {
  $json = $raw | ConvertFrom-Json
  foreach ($candidate in @($json.workspace.project_dir, $json.workspace.current_dir, $json.cwd)) {
    if ($candidate) { $dir = [string]$candidate; break }
  }
  if ([string]$json.session_id -match '^[\w.-]{1,128}$' -and [string]$json.session_id -ne '-') {
    $session = [string]$json.session_id
  }
} catch { }
if (-not $dir) { $dir = (Get-Location).ProviderPath }
# Tasks are keyed by the project's real path: follow a symlink or junction as realpath does.
try {
  $item = Get-Item -LiteralPath $dir -Force
  if ($item.LinkType -and $item.Target) { $dir = [string]($item.Target | Select-Object -First 1) }
  $dir = [System.IO.Path]::GetFullPath($dir)
  if ($dir.Length -gt 3) { $dir = $dir.TrimEnd('\') }
} catch { }

$now = [DateTimeOffset]::UtcNow.ToUnixTimeSeconds()
$lines = [System.IO.File]::ReadAllLines($file, [System.Text.Encoding]::UTF8)
$split = $session -and ($lines -contains 'sessions')
$fresh = @()
$others = @{}
foreach ($line in $lines) {
  $owner = $null
  if ($line.StartsWith('session ')) {
    if (-not $split) { continue }
    $line = $line.Substring(8)
    $cut = $line.IndexOf(' ')
    if ($cut -lt 1) { continue }
    $owner = $line.Substring(0, $cut)
    $line = $line.Substring($cut + 1)
  } elseif ($split) { continue }
  $space = $line.IndexOf(' ')
  $tab = $line.IndexOf("`t")
  if ($space -lt 1 -or $tab -lt $space) { continue }
  # Windows paths are case-insensitive.
  if ($line.Substring($space + 1, $tab - $space - 1) -ine $dir) { continue }
  $expires = 0L
  if ([long]::TryParse($line.Substring(0, $space), [ref]$expires) -and $expires -gt $now) {
    if (-not $owner -or $owner -ceq $session) { $fresh += $line.Substring($tab + 1) }
    else { $others[$owner] = $true }
  }
}
if ($others.Count -gt 0) {
  $fresh += "+$($others.Count) other session$(if ($others.Count -ne 1) { 's' })"
}
if ($fresh.Count -gt 0) { Write-Output ("delegate: " + ($fresh -join ' | ')) }
exit 0
