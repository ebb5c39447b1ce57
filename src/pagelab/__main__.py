from pagelab.cli import main

raise SystemExit(main())
