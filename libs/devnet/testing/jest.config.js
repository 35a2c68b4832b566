module.exports = {
  displayName: 'devnet-testing',
  preset: '../../../jest.preset.js',
  rootDir: __dirname,
};
