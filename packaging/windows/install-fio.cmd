@echo off
rem Start menu > Fiometer > Install fio: fio is a separate program (GPLv2) that Fiometer runs; it is not bundled.
rem winget where Windows has it (Windows 10 1809+, 11); else fio's own MSI from its releases page.
where winget >nul 2>nul
if errorlevel 1 goto msi
echo Installing fio with: winget install --exact --id fio.fio
winget install --exact --id fio.fio
if errorlevel 1 goto msi
echo.
echo fio is installed in C:\Program Files\fio. Check with "Fiometer Command Prompt": fiometer-cli doctor
pause
exit /b 0
:msi
echo winget is not available here (or it failed). Opening fio's releases page: download
echo fio-^<version^>-x64.msi there and run it; it installs C:\Program Files\fio\fio.exe.
start "" "https://github.com/axboe/fio/releases"
pause
